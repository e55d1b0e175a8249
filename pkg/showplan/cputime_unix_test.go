//go:build unix

package showplan

import (
	"syscall"
	"time"
)

// processCPUTime is user+system CPU time of this process; benchmarks report
// it per MB because wall-clock time on the shared build machine is noisy.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
