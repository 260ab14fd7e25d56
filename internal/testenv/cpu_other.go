//go:build !unix

package testenv

import "time"

func procCPU(int) time.Duration { return 0 }

// SelfCPU returns 0 where getrusage is not available.
func SelfCPU() time.Duration { return 0 }
