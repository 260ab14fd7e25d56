// Package archtest holds the test that keeps the module's import graph to
// ARCHITECTURE.md's "may import" column, read from the document itself
// (imports_test.go, parseRules): pure engines stay pure, the edge links
// nothing of the central service, only the wiring packages reach
// everything, a package without a row or a row without a package fails.
// It has no code of its own.
package archtest
