package main

// The tests of the daemon run the real binary, built once here, over pipes.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// pidBin is the binary the tests run.
var pidBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pid-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pidBin = filepath.Join(dir, "pid")
	if out, err := exec.Command("go", "build", "-o", pidBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building pid: %v\n%s", err, out)
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
