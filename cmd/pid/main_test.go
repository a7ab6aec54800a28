package main

// The tests of the daemon run the real binary, built once here (or $PID_BIN), over pipes.

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/pidtest"
)

// pidBin is the binary the tests run.
var pidBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if pidBin, err = pidtest.Binary(dir, false); err != nil {
		fmt.Fprintf(os.Stderr, "building pid: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		defer func() {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "goleak:", err)
				code = 1
			}
		}()
		code = m.Run()
	}()
	os.Exit(code)
}
