package testenv

import (
	"os"
	"syscall"
	"testing"
)

// SmallFS mounts a tmpfs of size (e.g. "2m") on a fresh folder and
// unmounts it at the end of the test: a real file system that fills up.
// Mounting needs root: without it the test is skipped, and fails under
// CI=true (CI runs as root).
func SmallFS(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("mounting a small tmpfs needs root; CI runs these tests as root")
		}
		t.Skip("needs root to mount a small tmpfs (runs in CI)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
