//go:build !unix

// This file is signal_unix.go's fallback: there is no SIGUSR1 here, so asking for the stats
// line fails (Process.Signal refuses the signal) and pidsoak says so. It reads /proc too:
// it is a Linux tool that merely compiles elsewhere.

package main

import "syscall"

// statsSignal is SIGUSR1's number on Linux, which Process.Signal refuses on this system.
var statsSignal = syscall.Signal(10)
