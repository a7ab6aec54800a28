// This file composes the problems the language servers see (issue 26; package diagnostics:
// edit's and write's settle step, R18, and the diagnostics tool) into the session: it picks
// their source, the editor when its face says it answers editor/diagnostics
// (DiagnosticsFace), else pid's own language servers (package lsp, the settings' "lsp"), else
// nowhere: then nothing waits and the tool is not offered. The host's language servers are
// here too.

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/diagnostics"
	"github.com/pid-agent/pid/lsp"
	"github.com/pid-agent/pid/problems"
	"github.com/pid-agent/pid/toolexec"
	"github.com/pid-agent/pid/tools"
)

// DiagnosticsFace is what a face implements when its client may report the problems of
// files (the native face: editor/diagnostics).
type DiagnosticsFace interface {
	// ReportsDiagnostics reports whether the client declared that it answers. Contract:
	// quick, safe for concurrent use; the answer does not change during a session.
	ReportsDiagnostics() bool
	// Diagnostics asks the client for the problems of paths (absolute; none: every file it
	// has problems for), which it answers once its language servers have reported on the
	// files' text, or after wait.Change with what it has (wait.First for a language's first
	// report, a server that may still be starting). Contract: called from a batch's
	// goroutines, possibly concurrently; must return promptly once ctx ends (and withdraw the
	// request).
	Diagnostics(ctx context.Context, s *Session, paths []string, wait DiagnosticsWait) (Problems, error)
}

// DiagnosticsWait is how long a client may take to report (editor/diagnostics' waitMs and
// firstWaitMs).
type DiagnosticsWait = diagnostics.Wait

// Problems is what a source of problems says: the problems, and the files whose language
// server was still starting (their problems may come later).
type Problems = diagnostics.Problems

// Diagnostic is one problem a language server reports in a file.
type Diagnostic = problems.Diagnostic

// LanguageServer is one of pid's language servers, as lsp/servers lists it.
type LanguageServer = lsp.Status

// DiagnosticsSettings are the session's "diagnostics" settings.
type DiagnosticsSettings = diagnostics.Settings

// DiagnosticsName is the name of the diagnostics tool.
const DiagnosticsName = diagnostics.Name

// diagnosticsState is what the session knows of its source of problems, set by build.
type diagnosticsState struct {
	// editor is set when the face's client reports problems; else pid's language servers
	// are used, when at least one is configured.
	editor DiagnosticsFace
	// wait is how long the source may take to report.
	wait DiagnosticsWait
	// lsp is the session's own "lsp" servers (session/new's), over the settings'.
	lsp json.RawMessage
	// files, when the tools go through the editor's buffers, is how pid's own servers get
	// the text the tools wrote (the disk may not have it).
	files *EditorFiles
}

// setUpDiagnostics decides where the session's problems come from and returns tools with
// edit and write settling on them and the diagnostics tool added; tools unchanged when the
// session has no source.
func (s *Session) setUpDiagnostics(cfg Config, files *EditorFiles, all []toolexec.Tool) []toolexec.Tool {
	d := &s.diag
	d.wait = cfg.Diagnostics.Waits()
	d.lsp = cfg.LSP
	if files != nil && files.Read != nil {
		d.files = files
	}
	if cfg.Diagnostics != nil && cfg.Diagnostics.Off {
		return all
	}
	rep := &diagnostics.Reporter{Source: "the editor", Ask: s.problems,
		Resolve: func(p string) (string, error) { return s.ws.Resolve(p) }, Cwd: s.ws.Cwd(),
		Fail: func(msg string) { s.face.Warn(s, msg) }}
	if f, ok := s.face.(DiagnosticsFace); ok && f.ReportsDiagnostics() {
		d.editor = f
	} else if len(s.lspServers()) > 0 {
		rep.Source = "the language server"
		rep.Serves = func() func(string) bool {
			servers := s.lspServers()
			return func(p string) bool { return lsp.Request{Paths: []string{p}, Servers: servers}.Serves() }
		}
		rep.Fail = func(msg string) { s.host.log.Warn("diagnostics", "session", s.id, "err", msg) }
	} else {
		return all
	}
	settle := &toolexec.Settle{Run: rep.Settle}
	out := make([]toolexec.Tool, 0, len(all)+1)
	for _, t := range all {
		if t.Name == tools.NameEdit || t.Name == tools.NameWrite {
			t.Settle = settle
		}
		out = append(out, t)
	}
	return append(out, rep.Tool())
}

// lspServers returns the language servers this session may start: the user settings',
// a trusted workspace's, then the session's own, by name. Problems with them are reported
// once.
func (s *Session) lspServers() map[string]*lsp.ServerConfig {
	var layers []map[string]*lsp.ServerConfig
	add := func(where string, raw json.RawMessage) {
		if len(raw) == 0 {
			return
		}
		m, err := lsp.Parse(raw)
		if err != nil {
			s.host.reportLSP(fmt.Sprintf("settings: %s: %v (those language servers are not started)", where, err))
			return
		}
		layers = append(layers, m)
	}
	if h := s.host; h.loader != nil {
		user, ws := h.loader.LSP(s.ws.Cwd())
		add("the user settings' lsp", user)
		add("the workspace settings' lsp", ws)
	}
	add("the session's lsp", s.diag.lsp)
	return lsp.Merge(layers...)
}

// problems asks the session's source for the problems of paths (none: all it knows),
// waiting d.wait.Change for its report at most (the editor: d.wait.First for a language's
// first report), plus a second for the editor's answer. An error means no answer. It is the
// diagnostics Reporter's Ask (contract there).
func (s *Session) problems(ctx context.Context, paths []string) (Problems, error) {
	d := &s.diag
	if d.editor != nil {
		limit := max(d.wait.Change, d.wait.First) + diagnostics.AnswerSlack
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		p, err := d.editor.Diagnostics(ctx, s, paths, d.wait)
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("the editor did not answer editor/diagnostics within %v", limit)
		}
		return p, err
	}
	m := s.host.lspManager()
	if len(paths) == 0 {
		return Problems{Diagnostics: m.Current(s.ws.Roots())}, nil
	}
	r := lsp.Request{Paths: paths, Servers: s.lspServers(), FolderOf: s.folderOf}
	if d.files != nil {
		r.Read = d.files.Read
	}
	ds, err := m.Diagnostics(ctx, r, time.Now().Add(d.wait.Change))
	return Problems{Diagnostics: ds}, err
}

// folderOf returns the workspace folder holding path (the innermost), else the cwd: one
// language server runs per folder.
func (s *Session) folderOf(path string) string {
	best := ""
	for _, r := range s.ws.Roots() {
		if (path == r || strings.HasPrefix(path, r+string(filepath.Separator))) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return s.ws.Cwd()
	}
	return best
}

// lspHost is the host's language servers (package lsp), made on first need.
type lspHost struct {
	// mu guards the fields below it.
	mu      sync.Mutex
	m       *lsp.Manager
	closed  bool
	reports map[string]bool
}

// lspManager returns the host's language servers, made on first use; after Close, one that
// starts nothing.
func (h *Host) lspManager() *lsp.Manager {
	h.lsp.mu.Lock()
	defer h.lsp.mu.Unlock()
	if h.lsp.m == nil {
		h.lsp.m = lsp.NewManager(lsp.Options{Log: h.log})
		if h.lsp.closed {
			h.lsp.m.Close()
		}
	}
	return h.lsp.m
}

// LanguageServers lists the host's language servers (lsp/servers).
func (h *Host) LanguageServers() []LanguageServer {
	h.lsp.mu.Lock()
	m := h.lsp.m
	h.lsp.mu.Unlock()
	if m == nil {
		return []LanguageServer{}
	}
	return m.Servers()
}

// closeLSP stops the host's language servers.
func (h *Host) closeLSP() {
	h.lsp.mu.Lock()
	h.lsp.closed = true
	m := h.lsp.m
	h.lsp.mu.Unlock()
	if m != nil {
		m.Close()
	}
}

// reportLSP reports a problem with the "lsp" settings once.
func (h *Host) reportLSP(msg string) {
	h.lsp.mu.Lock()
	if h.lsp.reports == nil {
		h.lsp.reports = map[string]bool{}
	}
	seen := h.lsp.reports[msg]
	h.lsp.reports[msg] = true
	h.lsp.mu.Unlock()
	if !seen {
		h.opts.Report(msg, true)
	}
}
