//go:build unix

// This file names the signal that asks pid for its stats line (cmd/pid/stats.go).

package main

import "syscall"

// statsSignal makes a pid started with PID_STATS write its stats line.
var statsSignal = syscall.SIGUSR1
