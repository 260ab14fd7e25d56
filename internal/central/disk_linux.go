package central

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// statfsSpace is the real DiskSpace: statfs(2) on path. Free is f_bavail
// (the blocks left to unprivileged processes; the blocks reserved for root
// are of no use to the service), both counted in fragments (f_frsize).
func statfsSpace(path string) (free, total uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	size := uint64(st.Frsize)
	if size == 0 { // file systems that leave f_frsize unset
		size = uint64(st.Bsize)
	}
	return st.Bavail * size, st.Blocks * size, nil
}
