// This file is the test server's command line, shared by cmd/pidtestmcp and by tests that
// run their own binary as the server.

package testserver

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Main runs the server as a process and returns its exit status:
//
//	[-http] [-gate FIFO] [-fail-start MESSAGE] [-stderr TEXT] [-stubborn]
//
// Over stdio by default; -http serves streamable HTTP on 127.0.0.1 and prints the URL
// (http://127.0.0.1:PORT/mcp) on stdout. -stderr writes TEXT to stderr first; -gate opens
// FIFO and reads one line before serving, so a test can hold the server in its start;
// -fail-start writes MESSAGE to stderr and exits with status 2 instead of serving.
// -stubborn makes a server that is hard to stop: it ignores SIGTERM, stays after its
// stdin closes, and starts a child ("sleep 1000", its id in whoami's "child") that stays
// in its process group.
//
// Contract: called once, from a main function; it uses the process's stdin, stdout and
// stderr, and the crash tool exits the process.
func Main(args []string) int {
	fs := flag.NewFlagSet("pidtestmcp", flag.ContinueOnError)
	httpMode := fs.Bool("http", false, "serve streamable HTTP on 127.0.0.1 (prints the URL)")
	gate := fs.String("gate", "", "a FIFO to read one line from before serving")
	failStart := fs.String("fail-start", "", "write this to stderr and exit 2 instead of serving")
	stderr := fs.String("stderr", "", "write this to stderr before serving")
	stubborn := fs.Bool("stubborn", false, "ignore SIGTERM and the end of stdin, and start a child")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stderr != "" {
		fmt.Fprintln(os.Stderr, *stderr)
	}
	if *gate != "" {
		f, err := os.Open(*gate)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pidtestmcp:", err)
			return 1
		}
		_, _ = bufio.NewReader(f).ReadString('\n')
		f.Close()
	}
	if *failStart != "" {
		fmt.Fprintln(os.Stderr, *failStart)
		return 2
	}
	if *stubborn {
		signal.Ignore(syscall.SIGTERM)
		child := exec.Command("sleep", "1000")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "pidtestmcp:", err)
			return 1
		}
		childPid = child.Process.Pid
	}
	srv := New(Options{})
	if *httpMode {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "pidtestmcp:", err)
			return 1
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		err = http.Serve(ln, h)
		fmt.Fprintln(os.Stderr, "pidtestmcp:", err)
		return 1
	}
	err := srv.Run(context.Background(), &sdk.StdioTransport{})
	for *stubborn {
		time.Sleep(time.Hour)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidtestmcp:", err)
		return 1
	}
	return 0
}
