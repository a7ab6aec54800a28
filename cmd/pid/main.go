// Command pid is the daemon an editor starts as a child process. It speaks JSON-RPC 2.0
// with LSP framing on stdin and stdout (see docs/protocol.md); logs go to stderr.
//
//	pid                 serve the protocol on stdin/stdout
//	pid --acp           serve the Agent Client Protocol instead (see docs/acp.md)
//	pid test FILE...    replay fixture files against this binary (see docs/fixtures.md)
//	pid doctor          say what this machine gives pid (the sandbox for bash, saved keys)
//	pid login           save an API key and a default model (login.go); --check says what is set
//	pid logout [NAME]   remove a key pid login saved
//	pid exec PROMPT     run one prompt headless in the current folder (exec.go)
//	pid sandbox-exec    internal: the sandbox's helper, which pid starts for each bash call
//	pid --version       print the version: pid VERSION (COMMIT, GO VERSION, OS/ARCH)
//
// SIGTERM, SIGINT and SIGHUP make pid wind down as when stdin closes: running tools are
// cancelled, every process group a tool started is killed, and pid exits with the code
// documented for stdin closing. A second signal, or a face that does not return within
// windDownWait, makes it kill the groups and exit at once. Every process a tool starts also
// dies with pid when pid itself is killed (see procgroup.StartGroup).
package main

import (
	"context"
	"fmt"
	"github.com/pid-agent/pid/internal/procgroup"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pid-agent/pid/acp"
	"github.com/pid-agent/pid/rpc"
	"github.com/pid-agent/pid/sandbox"
)

const (
	// windDownWait is how long a signal waits for the face to return before pid kills the
	// tools' process groups and exits anyway (a face blocked in a read that closing stdin
	// cannot interrupt, as on a terminal).
	windDownWait = 3 * time.Second
	// exitGrace is how long the processes that tools left behind get between SIGTERM and
	// SIGKILL when pid exits.
	exitGrace = 500 * time.Millisecond
)

func main() {
	// The sandbox's helper first, before anything else is set up: it runs for every bash
	// call. (The sandbox package intercepts it earlier still, in its init, when pid started
	// it; reaching this line means someone else did, and sandbox.Main says so.)
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	serveACP := false
	if len(args) > 0 {
		switch args[0] {
		case "--acp", "-acp":
			// The Agent Client Protocol (newline-delimited JSON-RPC) on stdin/stdout.
			serveACP = true
			if len(args) > 1 && args[1] == "login" {
				// ACP's terminal authentication appends the method's args (login) to the
				// agent's command line (pid --acp): it is pid login.
				return login(args[2:])
			}
		case "--version", "-version", "version":
			fmt.Println(versionLine())
			return 0
		case "test":
			return runFixtures(args[1:])
		case "doctor":
			if len(args) > 1 && (args[1] == "--json" || args[1] == "-json") {
				return doctorJSON(os.Stdout)
			}
			return doctor(os.Stdout)
		case "login":
			return login(args[1:])
		case "exec":
			ver, _ := buildVersion()
			return runExec(args[1:], ver)
		case "logout":
			return logout(args[1:])
		case "-h", "--help", "help":
			fmt.Fprintln(os.Stderr, "usage: pid            serve JSON-RPC (LSP framing) on stdin/stdout\n       pid --acp      serve the Agent Client Protocol (ACP v1) on stdin/stdout\n       pid test FILE... replay fixtures against this binary\n       pid doctor [--json] what this machine gives pid (the sandbox for bash, saved keys, the model's key, the folder's trust)\n       pid login      save an API key and a default model (asks in the terminal); pid login --check says what is set\n       pid logout [NAME] remove a key pid login saved (every one without NAME)\n       pid exec [--json] [--mode MODE] [--model PROVIDER/ID] [--resume SESSION] [--max-turns N] PROMPT\n                      run one prompt headless in the current folder (PROMPT - reads stdin)\n       pid --version")
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
	log := logger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	// Exit codes as documented for stdin closing: ACP 0; the native protocol 1 unless
	// shutdown came first, which only the face knows (so 1 when it does not return).
	stuckCode := 1
	if serveACP {
		stuckCode = 0
	}
	// Notify before serving, so that a signal from the first answer on is handled.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go windDownOnSignal(log, sigs, cancel, in, served, stuckCode)
	if os.Getenv("PID_STATS") != "" {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, statsSignal)
		go statsOnSignal(usr1, served)
	}
	var code int
	ver, _ := buildVersion()
	if serveACP {
		code = acp.Serve(ctx, in, out, acp.Options{Version: ver, Log: log})
	} else {
		code = rpc.Serve(ctx, in, out, rpc.Options{Version: ver, Log: log})
	}
	close(served)
	// The runs are over; what tools left running in the background goes with pid.
	if n := procgroup.KillGroups(exitGrace); n > 0 {
		log.Info("ended the process groups tools left running", "groups", n)
	}
	return code
}

// windDownOnSignal waits for a signal on sigs (SIGTERM, SIGINT, SIGHUP) until served is
// closed, then stops their delivery. On the first signal it cancels the face's context and
// closes its input (the face then winds down as when the editor closes stdin, and run kills
// the tools' process groups); if the face has not returned after windDownWait, or on a
// second signal, it kills the groups itself and exits with code.
func windDownOnSignal(log *slog.Logger, sigs chan os.Signal, cancel context.CancelFunc, in *os.File, served <-chan struct{}, code int) {
	defer signal.Stop(sigs)
	select {
	case <-served:
		return
	case sig := <-sigs:
		log.Info("winding down: cancelling the runs and ending the tools' processes", "signal", sig.String())
	}
	cancel()
	in.Close() // for a face that does not watch its context; closing twice is harmless
	wait := time.NewTimer(windDownWait)
	defer wait.Stop()
	select {
	case <-served:
		return
	case sig := <-sigs:
		log.Warn("second signal: exiting without waiting for the runs", "signal", sig.String())
	case <-wait.C:
		log.Warn("the runs did not end in time: exiting without them", "waited", windDownWait.String())
	}
	procgroup.KillGroups(0)
	os.Exit(code)
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
