// This file reads the process's memory figures on Linux.

//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

var (
	statm    *os.File
	pageSize = uint64(os.Getpagesize())
	statmBuf = make([]byte, 128)
)

// currentRSS returns the resident set size now, from /proc/self/statm (0 if unreadable).
func currentRSS() uint64 {
	if statm == nil {
		f, err := os.Open("/proc/self/statm")
		if err != nil {
			return 0
		}
		statm = f
	}
	n, _ := statm.ReadAt(statmBuf, 0)
	fields := bytes.Fields(statmBuf[:n])
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * pageSize
}

// maxRSS returns the kernel's peak resident set size of the process (ru_maxrss is in KB on
// Linux).
func maxRSS() uint64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
}
