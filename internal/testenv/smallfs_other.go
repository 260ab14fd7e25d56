//go:build !linux

package testenv

import "testing"

// SmallFS needs Linux's tmpfs; elsewhere the test is skipped.
func SmallFS(t testing.TB, size string) string {
	t.Helper()
	t.Skip("a small tmpfs needs Linux")
	return ""
}
