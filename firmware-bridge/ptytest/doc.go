// Package ptytest gives tests a real (pseudo-)terminal to run a serial
// meter driver through go.bug.st/serial, with a fake meter on the master
// side. It works on Linux only; elsewhere the package is empty and tests
// that need it carry a linux build tag.
package ptytest
