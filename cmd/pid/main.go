// Command pid is the daemon an editor starts over stdio. See README.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "pid: the JSON-RPC daemon is not built yet (issue 3)")
	os.Exit(2)
}
