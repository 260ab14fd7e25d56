//go:build !linux

package central

import (
	"errors"
	"fmt"
)

// statfsSpace does not measure outside Linux: the service then reports
// the data dir's disk as not measured, never as full.
func statfsSpace(path string) (free, total uint64, err error) {
	return 0, 0, fmt.Errorf("statfs %s: %w", path, errors.ErrUnsupported)
}
