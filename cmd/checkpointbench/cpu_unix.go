//go:build unix

// This file measures the process's own CPU time on Unix (getrusage).

package main

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) this process has used: around a call that
// runs alone in the process, what the call cost its threads, whatever the load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
