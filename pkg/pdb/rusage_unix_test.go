//go:build unix

package pdb

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time used so far; on a shared, loaded
// machine it is a steadier benchmark figure than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
