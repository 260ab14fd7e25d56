//go:build unix

package testenv

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU reads utime + stime of process pid from /proc/<pid>/stat.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After ')': state(3) ... utime(14) stime(15) → indexes 11 and 12.
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / clockTicks
}

// SelfCPU returns the CPU time (user + system) this process has used.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
