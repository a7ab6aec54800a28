// Command pidtestmcp runs the test MCP server of package testserver (see testserver.Main
// for its flags): over stdio by default, or over streamable HTTP on a loopback port with
// -http, printing the URL on stdout.
package main

import (
	"os"

	"github.com/pid-agent/pid/mcp/internal/testserver"
)

func main() { os.Exit(testserver.Main(os.Args[1:])) }
