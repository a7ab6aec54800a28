// Command pid is the daemon an editor starts as a child process. It speaks JSON-RPC 2.0
// with LSP framing on stdin and stdout (see docs/protocol.md); logs go to stderr.
//
//	pid                 serve the protocol on stdin/stdout
//	pid --acp           serve the Agent Client Protocol instead (see docs/acp.md)
//	pid test FILE...    replay fixture files against this binary (see docs/fixtures.md)
//	pid --version       print the version
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/pid-agent/pid/acp"
	"github.com/pid-agent/pid/rpc"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	serveACP := false
	if len(args) > 0 {
		switch args[0] {
		case "--acp", "-acp":
			// The Agent Client Protocol (newline-delimited JSON-RPC) on stdin/stdout.
			serveACP = true
		case "--version", "-version", "version":
			fmt.Println("pid", version)
			return 0
		case "test":
			return runFixtures(args[1:])
		case "-h", "--help", "help":
			fmt.Fprintln(os.Stderr, "usage: pid            serve JSON-RPC (LSP framing) on stdin/stdout\n       pid --acp      serve the Agent Client Protocol (ACP v1) on stdin/stdout\n       pid test FILE... replay fixtures against this binary\n       pid --version")
			return 0
		default:
			fmt.Fprintf(os.Stderr, "pid: unknown argument %q (try pid --help)\n", args[0])
			return 2
		}
	}
	if path := os.Getenv("PID_CPUPROFILE"); path != "" {
		if f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))); err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	// The daemon's live heap is small (a transcript, some tools' output); collecting at 5x
	// of it instead of 2x halves GC work on busy batches. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// An editor that goes away closes our stdout: a write must then fail (and the daemon wind
	// down when stdin ends) instead of killing the process with SIGPIPE mid-reply.
	signal.Ignore(syscall.SIGPIPE)
	in, out := pollable(os.Stdin, 0), pollable(os.Stdout, 1)
	if serveACP {
		return acp.Serve(context.Background(), in, out, acp.Options{Version: version, Log: logger()})
	}
	return rpc.Serve(context.Background(), in, out, rpc.Options{Version: version, Log: logger()})
}

// logger writes to stderr; PID_LOG=debug|info|warn|error sets the level (default warn).
func logger() *slog.Logger {
	level := slog.LevelWarn
	switch strings.ToLower(os.Getenv("PID_LOG")) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
