// Package pidtest is the editor's end of a pid daemon, written once for every test and
// command that starts pid and talks to it: package rpc's and package acp's tests, cmd/pid's
// signal tests, and the commands that drive the real binary (cmd/pidsoak, cmd/piddemo,
// cmd/searchbench, cmd/sandboxbench).
//
// Entry points:
//
//   - Binary locates the pid binary to run ($PID_BIN) or builds it; Build compiles any main
//     package of this module (cmd/pid, or a helper such as the test MCP server) into a
//     folder, with -race when asked; Race reports whether the running binary was built with
//     it.
//   - Start runs a built pid as a child process over real pipes (os.Pipe, so that a write
//     that pid never reads fails after the hang guard instead of hanging), in folders of its
//     own when Options.Home is set, and returns a *Process: its Conn, its exit code, its
//     stderr, signals, CloseInput, Kill and Stop (the editor's shutdown, exit, stdin closed).
//   - NewConn speaks to a daemon over any writer and reader, for a face served in process.
//
// A Conn frames what it sends and splits what it reads in one of two framings: LSP
// (Content-Length headers, package rpc's face) or Lines (one JSON message per line, the ACP
// face). It is strict about what it reads: stdout carries protocol only, so a frame that
// is not exactly `Content-Length: N\r\n\r\n` followed by N bytes of JSON, or a line that is
// not JSON, is a wire error (Err); an LSP stream ends there, since its framing is lost. It
// either keeps every message in the order read (the default: tests Await a message by
// predicate, take them one after the other with Message, look at Messages, and Response
// finds an answer however late it is asked for), or, with ConnOptions.Discard, keeps
// nothing but the responses to its own requests, each handed once to the Response (or Call)
// waiting for it (long runs, whose own heap must not grow with the stream).
//
// Contract (who may call what concurrently):
//
//   - Every method of Conn and Process may be called from any goroutine, concurrently. A
//     frame is written whole under a lock, so concurrent senders never interleave bytes.
//   - ConnOptions.Check and ConnOptions.OnMessage run on the Conn's one read goroutine, one
//     message at a time, in the order pid wrote them: Check before the message is kept,
//     OnMessage after (so a waiter woken by it sees the message). They may send (Answer a
//     request of pid's) but must not wait for a later message: nothing is read meanwhile.
//   - Every wait (Await, Message, Response, Call, a write) is bounded by the hang guard,
//     and Process.Wait by its argument. It is no timed assertion: a wait that hits it has
//     hung, and its error says what it was waiting for.
//   - The read goroutine ends when the daemon's output ends (Done is then closed); a
//     Process's goroutines end once it has exited, which Wait, Kill and Stop wait for. A
//     caller that ends every Process it started, and closes the input of every Conn, leaves
//     no goroutine behind (goleak).
package pidtest
