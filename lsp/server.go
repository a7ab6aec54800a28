// This file runs one language server for one workspace folder: the process, its
// initialization, the documents it was told about, and the problems it reported.

package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/internal/procgroup"
	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/problems"
)

// The states of a server, as lsp/servers says them.
const (
	StateStarting = "starting"
	StateReady    = "ready"
	StateFailed   = "failed"
	StateStopped  = "stopped"
)

// stderrKeep is how much of a server's stderr is kept for its error.
const stderrKeep = 4 << 10

// server is one language server process (and its successors after a crash) for one folder.
type server struct {
	m      *Manager
	name   string
	folder string
	cfg    *ServerConfig

	// send is held while a diagnose sends its notifications, after it has let go of mu:
	// the notifications of one file keep their order, and a write to a server whose input
	// is full never blocks the read loop, which takes mu for each publishDiagnostics.
	send sync.Mutex
	// mu guards the fields below it.
	mu    sync.Mutex
	state string
	err   string
	// ready closes when the current start ended (ready or failed).
	ready chan struct{}
	conn  *conn
	group *procgroup.Group
	// exited closes when the current process has exited and been waited for, and its
	// output has been read to its end or closed.
	exited chan struct{}
	// pull is set when the server offers textDocument/diagnostic; save when it wants
	// didSave.
	pull, save bool
	// docs are the files the server was told about, by path.
	docs map[string]*document
	// last holds the problems the server last reported, by path.
	last map[string][]problems.Diagnostic
	// waiters wait for the next report on a path at or after a version.
	waiters map[string][]waiter
	// crashes counts the failures since the server was last ready long enough; retry is
	// when it may start again; closing restart cancels the wait that restarts it.
	crashes int
	retry   time.Time
	restart chan struct{}
	started time.Time
	stopped bool
}

type document struct {
	version int32
	text    string
}

type waiter struct {
	version int32
	ch      chan []problems.Diagnostic
}

// stderrTail keeps the end of a server's stderr.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrKeep {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-stderrKeep:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// startLocked starts the process and its initialization in the background. Caller holds
// s.mu.
func (s *server) startLocked() {
	s.state, s.err = StateStarting, ""
	ready := make(chan struct{})
	s.ready = ready
	s.started = time.Now()
	s.docs = map[string]*document{}
	s.last = map[string][]problems.Diagnostic{}
	cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
	cmd.Dir = s.folder
	cmd.Env = os.Environ()
	for k, v := range s.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	tail := &stderrTail{}
	cmd.Stderr = tail
	// Once the server has exited, its output is read for stopGrace at most, then closed
	// (which ends the connection's reader): a process it started may keep the pipes open
	// long after, and what a dead server wrote last is of no use then.
	cmd.WaitDelay = stopGrace
	stdin, err := cmd.StdinPipe()
	if err == nil {
		var stdout io.ReadCloser
		stdout, err = cmd.StdoutPipe()
		if err == nil {
			var g *procgroup.Group
			if g, err = procgroup.StartGroup(cmd); err == nil {
				c := newConn(stdin, stdout, s.m.opts.Log, s.notified, s.methods())
				exited := make(chan struct{})
				s.conn, s.group, s.exited = c, g, exited
				if s.m.spawn(c.serve) && s.m.spawn(func() { s.watch(g, c, tail, exited) }) && s.m.spawn(func() { s.initialize(c, ready) }) {
					return
				}
				// Close has ended the Manager's goroutines: nothing may start. (Unreachable
				// while stop holds the server's mu before Close ends them.)
				g.Signal(syscall.SIGKILL)
				stdout.Close()
				err = errors.New("pid is shutting down")
			}
		}
	}
	s.failLocked(fmt.Sprintf("could not start %s: %v", strings.Join(s.cfg.Command, " "), err))
}

// cancelRestartLocked cancels the wait for an automatic restart, if one is pending. Caller
// holds s.mu.
func (s *server) cancelRestartLocked() {
	if s.restart != nil {
		close(s.restart)
		s.restart = nil
	}
}

// failLocked marks the server failed with why, and schedules its restart. Caller holds s.mu.
func (s *server) failLocked(why string) {
	if s.stopped {
		return
	}
	if time.Since(s.started) > stableAfter {
		s.crashes = 0
	}
	s.crashes++
	s.state, s.err = StateFailed, why
	s.conn = nil
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	for p, ws := range s.waiters {
		for _, w := range ws {
			close(w.ch)
		}
		delete(s.waiters, p)
	}
	delay := s.m.backoff(s.crashes)
	s.retry = time.Now().Add(delay)
	s.m.opts.Log.Warn("language server failed", "server", s.name, "folder", s.folder, "err", why, "retryIn", delay)
	if s.crashes <= maxAutoRestarts {
		cancel := make(chan struct{})
		s.restart = cancel
		s.m.spawn(func() {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-cancel:
				return
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.restart == cancel && s.state == StateFailed && !s.stopped {
				s.restart = nil
				s.startLocked()
			}
		})
	}
}

// watch waits for the process to exit (and its output to end, see WaitDelay): unless the
// server was stopped, it failed.
func (s *server) watch(g *procgroup.Group, c *conn, tail *stderrTail, exited chan struct{}) {
	defer close(exited)
	err := g.Wait()
	<-c.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c || s.stopped {
		return
	}
	why := fmt.Sprintf("the language server exited (%v)", err)
	if err == nil {
		why = "the language server exited"
	}
	if t := tail.String(); t != "" {
		why += "; its stderr ends with: " + t
	}
	s.failLocked(why)
}

// initialize does the LSP handshake; ready closes when it is over.
func (s *server) initialize(c *conn, ready chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	folder := FileURI(s.folder)
	params := protocol.InitializeParams{
		ProcessID: int32(os.Getpid()),
		// Deprecated in LSP 3.6 for workspaceFolders, which are sent too; servers that
		// predate them still read rootUri.
		//lint:ignore SA1019 sent alongside WorkspaceFolders for older servers
		RootURI:               folder,
		InitializationOptions: s.cfg.InitializationOptions,
		ClientInfo:            &protocol.ClientInfo{Name: "pid"},
		WorkspaceFolders:      []protocol.WorkspaceFolder{{URI: string(folder), Name: s.folder}},
		Capabilities: protocol.ClientCapabilities{
			TextDocument: &protocol.TextDocumentClientCapabilities{
				Synchronization:    &protocol.TextDocumentSyncClientCapabilities{DidSave: true},
				PublishDiagnostics: &protocol.PublishDiagnosticsClientCapabilities{VersionSupport: true},
			},
			Workspace: &protocol.WorkspaceClientCapabilities{WorkspaceFolders: true, Configuration: true},
		},
	}
	if len(s.cfg.InitializationOptions) == 0 {
		params.InitializationOptions = nil
	}
	// textDocument.diagnostic (pull diagnostics, LSP 3.17) is newer than the types.
	raw, _ := json.Marshal(params)
	var p map[string]any
	_ = json.Unmarshal(raw, &p)
	if caps, ok := p["capabilities"].(map[string]any); ok {
		if td, ok := caps["textDocument"].(map[string]any); ok {
			td["diagnostic"] = map[string]any{"dynamicRegistration": false}
		}
	}
	var res struct {
		Capabilities struct {
			TextDocumentSync   json.RawMessage `json:"textDocumentSync"`
			DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
		} `json:"capabilities"`
	}
	err := c.call(ctx, "initialize", p, &res)
	if err == nil {
		err = c.notify("initialized", struct{}{})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c {
		return
	}
	if err != nil {
		s.failLocked(fmt.Sprintf("initialize failed: %v", err))
		if s.group != nil {
			s.group.Signal(syscall.SIGKILL)
		}
		return
	}
	dp := strings.TrimSpace(string(res.Capabilities.DiagnosticProvider))
	s.pull = dp != "" && dp != "null" && dp != "false"
	s.save = wantsSave(res.Capabilities.TextDocumentSync)
	s.state = StateReady
	close(ready)
}

// wantsSave reads textDocumentSync.save.
func wantsSave(raw json.RawMessage) bool {
	var o struct {
		Save json.RawMessage `json:"save"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	v := strings.TrimSpace(string(o.Save))
	return v != "" && v != "false" && v != "null"
}

// notified handles the server's notifications.
func (s *server) notified(method string, params json.RawMessage) {
	if method != "textDocument/publishDiagnostics" {
		return
	}
	var p protocol.PublishDiagnosticsParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	path := PathOf(p.URI)
	if path == "" {
		return
	}
	ds := fromProtocol(path, p.Diagnostics)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[path] = ds
	kept := s.waiters[path][:0]
	for _, w := range s.waiters[path] {
		if p.Version != 0 && int32(p.Version) < w.version {
			kept = append(kept, w)
			continue
		}
		w.ch <- ds
		close(w.ch)
	}
	if len(kept) == 0 {
		delete(s.waiters, path)
	} else {
		s.waiters[path] = kept
	}
}

// methods answers the server's requests: what a client without settings says. Anything
// else is answered -32601 (the connection's Admit).
func (s *server) methods() map[string]rpcconn.Method {
	type configurationParams struct {
		Items []json.RawMessage `json:"items"`
	}
	none := rpcconn.QuickOf(func(*json.RawMessage) (any, error) { return nil, nil })
	return map[string]rpcconn.Method{
		"workspace/configuration": rpcconn.QuickOf(func(p *configurationParams) ([]any, error) {
			return make([]any, len(p.Items)), nil
		}),
		"client/registerCapability":      none,
		"client/unregisterCapability":    none,
		"window/workDoneProgress/create": none,
		"window/showMessageRequest":      none,
		"workspace/workspaceFolders": rpcconn.QuickOf(func(*json.RawMessage) ([]protocol.WorkspaceFolder, error) {
			return []protocol.WorkspaceFolder{{URI: string(FileURI(s.folder)), Name: s.folder}}, nil
		}),
	}
}

// errNotReady is why a server gave no diagnostics: it is starting still, or failed.
var errNotReady = errors.New("the language server is not ready")

// diagnose tells the server the files' text (texts, by path) and returns the problems it
// reports for them, waiting until deadline at most. A file the server already has, with the
// same text, gets its last report at once.
//
// failed lists the paths it has no report on (all of them when err says the server is not
// ready); err says why.
func (s *server) diagnose(ctx context.Context, paths []string, texts map[string]string, deadline time.Time) (out []problems.Diagnostic, failed []string, err error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, paths, fmt.Errorf("%w: %s is still starting", errNotReady, s.name)
	}
	type wait struct {
		path string
		ch   chan []problems.Diagnostic
	}
	type note struct {
		method string
		params any
	}
	var waits []wait
	var notes []note
	s.send.Lock()
	s.mu.Lock()
	c, pull, save := s.conn, s.pull, s.save
	if s.state != StateReady || c == nil {
		err := s.err
		s.mu.Unlock()
		s.send.Unlock()
		return nil, paths, fmt.Errorf("%w: %s: %s", errNotReady, s.name, err)
	}
	for _, p := range paths {
		text := texts[p]
		d := s.docs[p]
		uri := FileURI(p)
		switch {
		case d == nil:
			d = &document{version: 1, text: text}
			s.docs[p] = d
			notes = append(notes, note{"textDocument/didOpen", protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: uri, LanguageID: protocol.LanguageIdentifier(languageID(p)), Version: d.version, Text: text}}})
		case d.text != text:
			d.version++
			d.text = text
			notes = append(notes, note{"textDocument/didChange", protocol.DidChangeTextDocumentParams{
				TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri}, Version: d.version},
				ContentChanges: []protocol.TextDocumentContentChangeEvent{{Text: text}},
			}})
		default:
			if ds, ok := s.last[p]; ok && !pull {
				out = append(out, ds...)
				continue
			}
		}
		if save {
			notes = append(notes, note{"textDocument/didSave", protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}}})
		}
		if !pull {
			ch := make(chan []problems.Diagnostic, 1)
			s.waiters[p] = append(s.waiters[p], waiter{version: d.version, ch: ch})
			waits = append(waits, wait{p, ch})
		} else {
			waits = append(waits, wait{path: p})
		}
	}
	s.mu.Unlock()
	for _, n := range notes {
		if err := c.notify(n.method, n.params); err != nil {
			break // the server is gone: the waits end when its exit is seen
		}
	}
	s.send.Unlock()
	var firstErr error
	for _, w := range waits {
		if pull {
			ds, err := s.pullDiagnostics(ctx, c, w.path)
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				failed = append(failed, w.path)
				continue
			}
			out = append(out, ds...)
			continue
		}
		select {
		case ds, ok := <-w.ch:
			if !ok {
				firstErr = cmpErr(firstErr, fmt.Errorf("%w: %s stopped while pid waited", errNotReady, s.name))
				failed = append(failed, w.path)
			}
			out = append(out, ds...)
		case <-ctx.Done():
			s.dropWaiter(w.path, w.ch)
			firstErr = cmpErr(firstErr, fmt.Errorf("%s reported nothing on %s in time", s.name, w.path))
			failed = append(failed, w.path)
		}
	}
	return out, failed, firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *server) dropWaiter(path string, ch chan []problems.Diagnostic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.waiters[path]
	for i, w := range ws {
		if w.ch == ch {
			s.waiters[path] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(s.waiters[path]) == 0 {
		delete(s.waiters, path)
	}
}

// pullDiagnostics asks textDocument/diagnostic.
func (s *server) pullDiagnostics(ctx context.Context, c *conn, path string) ([]problems.Diagnostic, error) {
	var res struct {
		Kind  string                `json:"kind"`
		Items []protocol.Diagnostic `json:"items"`
	}
	err := c.call(ctx, "textDocument/diagnostic", map[string]any{"textDocument": protocol.TextDocumentIdentifier{URI: FileURI(path)}}, &res)
	if err != nil {
		return nil, fmt.Errorf("%s: textDocument/diagnostic: %w", s.name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res.Kind == "unchanged" {
		return s.last[path], nil
	}
	ds := fromProtocol(path, res.Items)
	s.last[path] = ds
	return ds, nil
}

// current returns everything the server last reported.
func (s *server) current() []problems.Diagnostic {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []problems.Diagnostic
	for _, ds := range s.last {
		out = append(out, ds...)
	}
	return out
}

// stop ends the server: shutdown and exit, then the process group is killed if it lingers.
func (s *server) stop(grace time.Duration) {
	s.mu.Lock()
	s.stopped = true
	s.cancelRestartLocked()
	c, g, state, exited := s.conn, s.group, s.state, s.exited
	s.state, s.conn = StateStopped, nil
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	for p, ws := range s.waiters {
		for _, w := range ws {
			close(w.ch)
		}
		delete(s.waiters, p)
	}
	s.mu.Unlock()
	if c == nil || g == nil {
		return
	}
	if state == StateReady {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		if c.call(ctx, "shutdown", nil, nil) == nil {
			_ = c.notify("exit", nil)
		}
		cancel()
		select {
		case <-exited:
		case <-time.After(grace):
		}
	}
	g.Signal(syscall.SIGKILL)
	<-exited
}
