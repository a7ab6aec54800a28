// This file gives the model the problems the language servers see (issue 26): after a
// batch's edit and write calls, the errors of the files they changed are added to their
// results (toolexec's settle step, R18), and the diagnostics tool asks for the problems of a
// file or of the workspace. They come from the editor when its face says it answers
// editor/diagnostics (DiagnosticsFace), else from pid's own language servers (package lsp,
// the settings' "lsp"), else nowhere: then nothing waits and the tool is not offered.

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/lsp"
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
type DiagnosticsWait struct {
	// Change is the wait for a report on a file's new text.
	Change time.Duration
	// First is the wait for a language's first report in the editor (its server may be
	// starting).
	First time.Duration
}

// Problems is what a source of problems says: the problems, and the files whose language
// server was still starting (their problems may come later).
type Problems struct {
	Diagnostics []Diagnostic
	Starting    []string
}

// Diagnostic is one problem a language server reports in a file.
type Diagnostic = lsp.Diagnostic

// LanguageServer is one of pid's language servers, as lsp/servers lists it.
type LanguageServer = lsp.Status

// DiagnosticsSettings are the session's "diagnostics" settings.
type DiagnosticsSettings struct {
	// WaitMs is how long the client may take to report on a change (editor/diagnostics'
	// waitMs; pid's own servers get as long); pid gives up a second after it. 0: 1500.
	WaitMs int `json:"waitMs,omitempty"`
	// FirstWaitMs is how long the editor may wait for a language's first report
	// (editor/diagnostics' firstWaitMs); pid gives up a second after the longer wait. 0: 8000.
	FirstWaitMs int `json:"firstWaitMs,omitempty"`
	// Off, when true, adds no problems to results and offers no diagnostics tool.
	Off bool `json:"off,omitempty"`
}

// DefaultDiagnosticsWait is the wait when the settings name none.
const DefaultDiagnosticsWait = 1500 * time.Millisecond

// DefaultFirstDiagnosticsWait is the wait for a language's first report when the settings
// name none: a language server starting (TypeScript's) takes seconds.
const DefaultFirstDiagnosticsWait = 8 * time.Second

// answerSlack is how much longer than the wait pid waits for the client's answer.
const answerSlack = time.Second

// DiagnosticsName is the name of the diagnostics tool.
const DiagnosticsName = tools.NameDiagnostics

// diagnosticsState is what the session knows of its source of problems, set by build.
type diagnosticsState struct {
	// editor is set when the face's client reports problems; own when pid's language
	// servers are used instead (at least one is configured); neither: no source.
	editor DiagnosticsFace
	own    bool
	wait   time.Duration
	// first is the editor's wait for a language's first report.
	first time.Duration
	// lsp is the session's own "lsp" servers (session/new's), over the settings'.
	lsp json.RawMessage
	// settle is the step edit and write share (R18).
	settle *toolexec.Settle
	// files, when the tools go through the editor's buffers, is how pid's own servers get
	// the text the tools wrote (the disk may not have it).
	files *EditorFiles
}

// setUpDiagnostics decides where the session's problems come from and returns tools with
// edit and write settling on them and the diagnostics tool added; tools unchanged when the
// session has no source.
func (s *Session) setUpDiagnostics(cfg Config, files *EditorFiles, all []toolexec.Tool) []toolexec.Tool {
	d := &s.diag
	d.wait = DefaultDiagnosticsWait
	d.first = DefaultFirstDiagnosticsWait
	d.lsp = cfg.LSP
	if files != nil && files.Read != nil {
		d.files = files
	}
	if cfg.Diagnostics != nil {
		if cfg.Diagnostics.Off {
			return all
		}
		if cfg.Diagnostics.WaitMs > 0 {
			d.wait = time.Duration(cfg.Diagnostics.WaitMs) * time.Millisecond
		}
		if cfg.Diagnostics.FirstWaitMs > 0 {
			d.first = time.Duration(cfg.Diagnostics.FirstWaitMs) * time.Millisecond
		}
	}
	if f, ok := s.face.(DiagnosticsFace); ok && f.ReportsDiagnostics() {
		d.editor = f
	} else if len(s.lspServers()) > 0 {
		d.own = true
	} else {
		return all
	}
	d.settle = &toolexec.Settle{Run: s.settleDiagnostics}
	out := make([]toolexec.Tool, 0, len(all)+1)
	for _, t := range all {
		if t.Name == tools.NameEdit || t.Name == tools.NameWrite {
			t.Settle = d.settle
		}
		out = append(out, t)
	}
	return append(out, s.diagnosticsTool())
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

// diagnosticsSource says who reports, in the result text.
func (s *Session) diagnosticsSource() string {
	if s.diag.editor != nil {
		return "the editor"
	}
	return "the language server"
}

// problems asks the session's source for the problems of paths (none: all it knows),
// waiting d.wait for its report at most (the editor: d.first for a language's first report),
// plus a second for the editor's answer. An error means no answer.
func (s *Session) problems(ctx context.Context, paths []string) (Problems, error) {
	d := &s.diag
	if d.editor != nil {
		limit := max(d.wait, d.first) + answerSlack
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		p, err := d.editor.Diagnostics(ctx, s, paths, DiagnosticsWait{Change: d.wait, First: d.first})
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
	ds, err := m.Diagnostics(ctx, r, time.Now().Add(d.wait))
	return Problems{Diagnostics: ds}, err
}

// startingText is what the model reads about a file whose language server was still
// starting when the editor answered: its problems may come later.
func startingText(shown string) string {
	return fmt.Sprintf("The language server for %s was still starting: problems may come later; call diagnostics before you finish.", shown)
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

// settleDiagnostics is edit's and write's settle step (R18): one question for every file
// the batch's successful edits and writes changed; each result gets its file's errors after
// the tool's own text, and details.diagnostics the file's whole list. No answer (an error,
// the wait passed, a cancel) changes nothing; the failure is logged.
func (s *Session) settleDiagnostics(ctx context.Context, in []toolexec.SettleInput) []*toolexec.Override {
	paths := make([]string, len(in))
	var ask []string
	for i, c := range in {
		var a struct {
			Path string `json:"path"`
		}
		if c.Call.Decode(&a) != nil {
			continue
		}
		p, err := s.ws.Resolve(a.Path)
		if err != nil {
			continue
		}
		paths[i] = p
		if !slices.Contains(ask, p) {
			ask = append(ask, p)
		}
	}
	if s.diag.own {
		// Only the files a server is for: the others would seem checked and clean.
		servers := s.lspServers()
		ask = slices.DeleteFunc(ask, func(p string) bool { return !(lsp.Request{Paths: []string{p}, Servers: servers}).Serves() })
		for i, p := range paths {
			if !slices.Contains(ask, p) {
				paths[i] = ""
			}
		}
	}
	if len(ask) == 0 {
		return nil
	}
	got, err := s.problems(ctx, ask)
	ds := got.Diagnostics
	if err != nil {
		if ctx.Err() != nil {
			return nil // the run was cancelled: nothing to report
		}
		msg := fmt.Sprintf("the problems of %s after this change are not known: %v", strings.Join(ask, ", "), err)
		if s.diag.editor != nil {
			s.face.Warn(s, msg)
			return nil
		}
		s.host.log.Warn("diagnostics", "session", s.id, "err", msg)
		var le *lsp.Error
		if !errors.As(err, &le) {
			return nil
		}
		// Some of pid's servers answered: what they said on the other files stands; the
		// files they failed on get nothing (not an empty list, which would say "clean").
		for i, p := range paths {
			if slices.Contains(le.Paths, p) {
				paths[i] = ""
			}
		}
	}
	out := make([]*toolexec.Override, len(in))
	for i, c := range in {
		p := paths[i]
		if p == "" {
			continue
		}
		mine := lsp.Filter(ds, p, 4)
		if mine == nil {
			mine = []lsp.Diagnostic{}
		}
		details, shown := withDiagnostics(c.Result.Details, mine)
		if shown == "" {
			shown = p
		}
		ov := &toolexec.Override{Details: details}
		if text := lsp.Report(s.diagnosticsSource(), []string{p}, mine, func(string) string { return shown }); text != "" {
			ov.Content = append(slices.Clone(c.Result.Content), llm.Text(text))
		}
		if slices.Contains(got.Starting, p) {
			if ov.Content == nil {
				ov.Content = slices.Clone(c.Result.Content)
			}
			ov.Content = append(ov.Content, llm.Text(startingText(shown)))
		}
		out[i] = ov
	}
	return out
}

// withDiagnostics returns edit's or write's details with the file's problems, and the path
// they show; details unchanged (and "") for another kind.
func withDiagnostics(details any, ds []lsp.Diagnostic) (any, string) {
	switch d := details.(type) {
	case tools.EditDetails:
		d.Diagnostics = ds
		return d, d.Path
	case tools.WriteDetails:
		d.Diagnostics = ds
		return d, d.Path
	}
	return details, ""
}

// diagnosticsSchema is the diagnostics tool's parameters.
const diagnosticsSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to report on, relative to the cwd or absolute; leave out for every file with problems."},
    "severity": {"type": "integer", "enum": [1, 2], "description": "1: errors only; 2 (default): errors and warnings."}
  },
  "additionalProperties": false
}`

// diagnosticsTool is the built-in read-only tool that reports the current problems.
func (s *Session) diagnosticsTool() toolexec.Tool {
	return toolexec.Tool{
		Name:        DiagnosticsName,
		Description: "Report the problems (compile errors, type errors, lint warnings) that the language servers see now in a file, or in every file they know about. Use it to check code after changing it, or before starting, instead of running a build.",
		Parameters:  json.RawMessage(diagnosticsSchema),
		Execute: func(ctx context.Context, call toolexec.Call, _ func(event.Result)) (toolexec.Result, error) {
			var a struct {
				Path     string `json:"path"`
				Severity int    `json:"severity"`
			}
			if err := call.Decode(&a); err != nil {
				return toolexec.Result{}, err
			}
			if a.Severity == 0 {
				a.Severity = 2
			}
			var paths []string
			if a.Path != "" {
				p, err := s.ws.Resolve(a.Path)
				if err != nil {
					return toolexec.Result{}, err
				}
				paths = []string{p}
				if s.diag.own && !(lsp.Request{Paths: paths, Servers: s.lspServers()}).Serves() {
					return toolexec.TextResult(fmt.Sprintf("No language server is set up for %s: the settings' lsp names none for its extension, so its problems are not known.", a.Path)), nil
				}
			}
			got, err := s.problems(ctx, paths)
			ds := got.Diagnostics
			if err != nil && len(ds) == 0 {
				return toolexec.Result{}, fmt.Errorf("%s gave no problems: %v", s.diagnosticsSource(), err)
			}
			ds = lsp.Filter(ds, "", a.Severity)
			if len(paths) == 1 {
				ds = lsp.Filter(ds, paths[0], a.Severity)
			}
			if ds == nil {
				ds = []lsp.Diagnostic{}
			}
			text := s.problemsText(a.Path, ds)
			for _, p := range got.Starting {
				text += "\n" + startingText(s.display(p))
			}
			return toolexec.Result{Content: []llm.Content{llm.Text(text)}, Details: map[string]any{"diagnostics": ds}}, nil
		},
	}
}

// maxFilesShown is how many files the diagnostics tool's text lists.
const maxFilesShown = 50

// problemsText is the diagnostics tool's text: per file, its problems with their severity.
func (s *Session) problemsText(asked string, ds []lsp.Diagnostic) string {
	if len(ds) == 0 {
		if asked != "" {
			return fmt.Sprintf("No problems reported in %s.", asked)
		}
		return "No problems reported in the workspace's files."
	}
	var files []string
	for _, d := range ds {
		if !slices.Contains(files, d.Path) {
			files = append(files, d.Path)
		}
	}
	slices.Sort(files)
	var b strings.Builder
	for i, f := range files {
		if i == maxFilesShown {
			fmt.Fprintf(&b, "\n... and %d more files with problems (ask about one with path)", len(files)-maxFilesShown)
			break
		}
		if i > 0 {
			b.WriteString("\n")
		}
		mine := lsp.Filter(ds, f, 4)
		errs := len(lsp.Filter(mine, f, 1))
		fmt.Fprintf(&b, "%s: %d errors, %d warnings\n", s.display(f), errs, len(mine)-errs)
		b.WriteString(lsp.Lines(labelled(mine), lsp.MaxShown))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// labelled prefixes each message with its severity.
func labelled(ds []lsp.Diagnostic) []lsp.Diagnostic {
	out := slices.Clone(ds)
	for i := range out {
		out[i].Message = [...]string{"error", "error", "warning", "info", "hint"}[min(max(out[i].Severity, 0), 4)] + ": " + out[i].Message
	}
	return out
}

// display shows an absolute path relative to the cwd when it is inside it.
func (s *Session) display(p string) string {
	for _, cwd := range []string{s.ws.Cwd(), realCwd(s.ws.Cwd())} {
		if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func realCwd(cwd string) string {
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		return r
	}
	return cwd
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
