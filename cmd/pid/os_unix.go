//go:build unix

// This file holds what cmd/pid does differently on Unix: the signal for the stats line.

package main

import "syscall"

// statsSignal asks a pid started with PID_STATS for its stats line (stats.go).
var statsSignal = syscall.SIGUSR1
