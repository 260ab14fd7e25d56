//go:build !unix

package slm

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
