//go:build linux || darwin

// This file turns a terminal's echo off for pid login's key prompt, with termios ioctls:
// echo goes off before the prompt is written (golang.org/x/term's ReadPassword turns it off
// only once it reads, so a key pasted at the prompt could be echoed before), and the line
// is still read in canonical mode, so the terminal's own line editing works.

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// echoOff turns the terminal f's echo off, leaving line input and signals on, and returns
// what turns it back on.
func echoOff(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	t.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}
