// This file runs `pid test`: fixture files replayed against this very binary.

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pid-agent/pid/fixture"
)

// runFixtures implements `pid test [-update] [-timeout D] [-v] FILE...`: it starts this
// binary once per fixture, plays the fixture (docs/fixtures.md) and prints "ok FILE" or
// "FAIL FILE" with a diff, then a summary. The exit code is 1 when a fixture failed, 2 on
// bad usage.
func runFixtures(args []string) int {
	return testFixtures(args, os.Stdout, os.Stderr)
}

func testFixtures(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pid test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	update := fs.Bool("update", false, "rewrite the expected messages from what pid sends")
	timeout := fs.Duration("timeout", 20*time.Second, "how long to wait for each expected message")
	verbose := fs.Bool("v", false, "print pid's stderr for passing fixtures too")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pid test [-update] [-timeout D] [-v] FILE...\n\nReplays fixture files (txtar, see docs/fixtures.md) against this binary.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		fs.Usage()
		return 2
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "pid test: cannot find this binary: %v\n", err)
		return 2
	}
	failed := 0
	for _, f := range files {
		rep := fixture.RunFile(f, bin, fixture.Options{Update: *update, Timeout: *timeout})
		switch {
		case !rep.OK():
			failed++
			fmt.Fprintf(stdout, "FAIL %s\n%s\n", f, indentBlock(rep.Failure))
			if len(rep.Stderr) > 0 {
				fmt.Fprintf(stdout, "    pid's stderr:\n%s\n", indentBlock(tail(string(rep.Stderr), 40)))
			}
		case *update:
			fmt.Fprintf(stdout, "updated %s\n", f)
		default:
			fmt.Fprintf(stdout, "ok %s\n", f)
		}
		if *verbose && rep.OK() && len(rep.Stderr) > 0 {
			fmt.Fprintf(stdout, "    pid's stderr:\n%s\n", indentBlock(string(rep.Stderr)))
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "FAIL: %d of %d fixtures failed\n", failed, len(files))
		return 1
	}
	fmt.Fprintf(stdout, "PASS: %d fixtures\n", len(files))
	return 0
}

func indentBlock(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
