// Package archtest holds the test that keeps the module's import graph to
// ARCHITECTURE.md's "may import" column: pure engines stay pure, the edge
// links nothing of the central service, and only the wiring packages reach
// everything. It has no code of its own.
package archtest
