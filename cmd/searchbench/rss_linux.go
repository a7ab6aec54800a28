// This file reads another process's peak memory on Linux.

//go:build linux

package main

import (
	"fmt"
	"os"
)

// peakRSS returns the peak resident set size of process pid (VmHWM in /proc/PID/status),
// in bytes, or 0 when it cannot be read.
func peakRSS(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	return vmHWM(string(b))
}
