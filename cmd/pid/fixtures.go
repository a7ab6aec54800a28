// This file runs `pid test`: fixture files replayed against this very binary.

package main

import (
	"fmt"
	"os"
)

func runFixtures(files []string) int {
	fmt.Fprintln(os.Stderr, "pid test: not implemented yet")
	return 2
}
