// This file holds Manager: the language servers of one daemon, started on first need, one
// per workspace folder and server, restarted after a crash, stopped with the daemon.

package lsp

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/problems"
)

const (
	// initTimeout bounds a server's initialize.
	initTimeout = 30 * time.Second
	// stableAfter is how long a server must have run for its crash count to start again.
	stableAfter = time.Minute
	// maxAutoRestarts is how many failures in a row are restarted on their own; after
	// that a server starts again only when it is needed (once its backoff has passed).
	maxAutoRestarts = 5
	// maxBackoff caps the wait before a restart.
	maxBackoff = 30 * time.Second
	// stopGrace is how long Close lets a server answer shutdown and exit.
	stopGrace = time.Second
)

// Options configure a Manager.
type Options struct {
	// Log receives the servers' failures; nil discards them.
	Log *slog.Logger
	// Backoff is the wait before the first restart after a crash, doubled at each crash in
	// a row up to 30 s; 0 means 500 ms.
	Backoff time.Duration
}

// Manager runs the language servers of one daemon. Its methods are safe for concurrent use.
//
// Every goroutine it starts (a connection's reader, a process's watcher, a handshake, a
// restart's wait) is its own: Close returns once they have all ended.
type Manager struct {
	opts Options
	// mu guards the fields below it.
	mu      sync.Mutex
	servers []*server
	closed  bool

	// bg tracks the Manager's goroutines. Its mu is taken last of all the locks (a server's
	// mu may be held), and guards done: once it is set, nothing starts.
	bg struct {
		mu   sync.Mutex
		done bool
		wg   sync.WaitGroup
	}
}

// spawn runs f on a goroutine of the Manager's, unless Close has ended them all (then it
// reports false and f never runs).
func (m *Manager) spawn(f func()) bool {
	m.bg.mu.Lock()
	defer m.bg.mu.Unlock()
	if m.bg.done {
		return false
	}
	m.bg.wg.Go(f)
	return true
}

// NewManager returns a Manager that has started nothing.
func NewManager(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	return &Manager{opts: opts}
}

func (m *Manager) backoff(crashes int) time.Duration {
	d := m.opts.Backoff
	for i := 1; i < crashes && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// Request is what Diagnostics asks: the files, the servers that may serve them, and which
// workspace folder each file belongs to.
type Request struct {
	Paths   []string
	Servers map[string]*ServerConfig
	// FolderOf returns the workspace folder of an absolute path: one server runs per folder.
	FolderOf func(path string) string
	// Read, if set, returns a file's text as the tools see it (the editor's buffer, when the
	// tools go through the editor); nil reads the disk. A file it cannot read is left out.
	Read func(ctx context.Context, path string) (string, error)
}

// Serves reports whether any of the servers is for one of the paths.
func (r Request) Serves() bool {
	for _, p := range r.Paths {
		for _, c := range r.Servers {
			if c.serves(p) {
				return true
			}
		}
	}
	return false
}

// Diagnostics tells the servers for the paths (starting those not running yet) the files'
// text (Request.Read's, else the disk's) and returns what they report, waiting until
// deadline at most. An *Error says why some server gave nothing on some paths (not started
// in time, failed, silent) and names them: what was reported on the others is returned with
// it. A path no server is for, or that cannot be read, is left out without an error.
func (m *Manager) Diagnostics(ctx context.Context, r Request, deadline time.Time) ([]problems.Diagnostic, error) {
	type job struct {
		s     *server
		paths []string
	}
	var jobs []*job
	byServer := map[*server]*job{}
	texts := map[string]string{}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for _, p := range r.Paths {
		if _, ok := texts[p]; ok || !(Request{Paths: []string{p}, Servers: r.Servers}).Serves() {
			continue
		}
		text, err := r.read(rctx, p)
		if err != nil {
			continue // deleted since, say: nothing to say about it
		}
		texts[p] = text
	}
	for _, p := range r.Paths {
		if _, ok := texts[p]; !ok {
			continue
		}
		for _, name := range sortedNames(r.Servers) {
			c := r.Servers[name]
			if !c.serves(p) {
				continue
			}
			s := m.server(name, r.FolderOf(p), c)
			if s == nil {
				continue
			}
			j := byServer[s]
			if j == nil {
				j = &job{s: s}
				byServer[s] = j
				jobs = append(jobs, j)
			}
			j.paths = append(j.paths, p)
		}
	}
	results := make([][]problems.Diagnostic, len(jobs))
	failed := make([][]string, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { results[i], failed[i], errs[i] = j.s.diagnose(ctx, j.paths, texts, deadline) })
	}
	wg.Wait()
	var out []problems.Diagnostic
	var msgs, paths []string
	for i := range jobs {
		out = append(out, results[i]...)
		if errs[i] != nil {
			msgs = append(msgs, errs[i].Error())
		}
		for _, p := range failed[i] {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	if len(msgs) > 0 {
		// A file one server failed on is not known, even if another reported on it.
		out = slices.DeleteFunc(out, func(d problems.Diagnostic) bool { return slices.Contains(paths, d.Path) })
		return out, &Error{Msg: strings.Join(msgs, "; "), Paths: paths}
	}
	return out, nil
}

func (r Request) read(ctx context.Context, path string) (string, error) {
	if r.Read != nil {
		return r.Read(ctx, path)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// Current returns what the servers of folders last reported, for every file they know.
func (m *Manager) Current(folders []string) []problems.Diagnostic {
	m.mu.Lock()
	servers := slices.Clone(m.servers)
	m.mu.Unlock()
	var out []problems.Diagnostic
	for _, s := range servers {
		if len(folders) == 0 || slices.Contains(folders, s.folder) {
			out = append(out, s.current()...)
		}
	}
	return out
}

// Error is why some server gave no diagnostics, and on which paths.
type Error struct {
	Msg   string
	Paths []string
}

func (e *Error) Error() string { return e.Msg }

// server returns the server name runs as for folder with configuration c, starting it when
// it is new, or failed and its backoff has passed; nil once the Manager is closed.
func (m *Manager) server(name, folder string, c *ServerConfig) *server {
	key := c.key()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	for _, s := range m.servers {
		if s.name == name && s.folder == folder && s.cfg.key() == key {
			s.mu.Lock()
			if s.state == StateFailed && !time.Now().Before(s.retry) {
				s.cancelRestartLocked()
				s.startLocked()
			}
			s.mu.Unlock()
			return s
		}
	}
	s := &server{m: m, name: name, folder: folder, cfg: c, last: map[string][]problems.Diagnostic{}, waiters: map[string][]waiter{}}
	s.mu.Lock()
	s.startLocked()
	s.mu.Unlock()
	m.servers = append(m.servers, s)
	return s
}

// Status is one server as lsp/servers lists it.
type Status struct {
	Name   string `json:"name"`
	Folder string `json:"folder"`
	// State is "starting", "ready", "failed" or "stopped".
	State string `json:"state"`
	// Error says why it failed (with the end of its stderr), or why it last failed.
	Error string `json:"error,omitempty"`
	// Restarts counts its failures in a row.
	Restarts int `json:"restarts,omitempty"`
}

// Servers lists the servers started so far, in the order they started.
func (m *Manager) Servers() []Status {
	m.mu.Lock()
	servers := slices.Clone(m.servers)
	m.mu.Unlock()
	out := make([]Status, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		out = append(out, Status{Name: s.name, Folder: s.folder, State: s.state, Error: s.err, Restarts: s.crashes})
		s.mu.Unlock()
	}
	return out
}

// Close stops every server (shutdown, exit, then a kill of its process group) and waits for
// them and for every goroutine of the Manager; nothing starts afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := m.servers
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.stop(stopGrace) })
	}
	wg.Wait()
	m.bg.mu.Lock()
	m.bg.done = true
	m.bg.mu.Unlock()
	m.bg.wg.Wait()
}

func sortedNames(m map[string]*ServerConfig) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
