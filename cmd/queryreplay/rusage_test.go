//go:build unix

package main

import "syscall"

// processCPU is the process's user+system CPU time in nanoseconds, for
// benchmark figures that other processes on the machine do not distort.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
