// This file stubs the memory figures where /proc and ru_maxrss in KB are not available.

//go:build !linux

package main

func currentRSS() uint64 { return 0 }
func maxRSS() uint64     { return 0 }
