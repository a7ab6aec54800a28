// This file asks the editor for the problems its language servers see (editor/diagnostics,
// when it declared capabilities.experimental.pid.diagnostics) and answers lsp/servers, the
// state of pid's own language servers.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/pid-agent/pid/session"
)

// ReportsDiagnostics implements session.DiagnosticsFace: whether the editor declared
// capabilities.experimental.pid.diagnostics.
func (s *Server) ReportsDiagnostics() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientDiag
}

// diagnosticsParams are editor/diagnostics' params.
type diagnosticsParams struct {
	SessionID   string   `json:"sessionId"`
	Paths       []string `json:"paths"`
	WaitMs      int64    `json:"waitMs"`
	FirstWaitMs int64    `json:"firstWaitMs"`
}

// Diagnostics implements session.DiagnosticsFace: editor/diagnostics. ctx bounds the wait
// (s.call sends $/cancelRequest when it ends first).
func (s *Server) Diagnostics(ctx context.Context, ss *session.Session, paths []string, wait session.DiagnosticsWait) (session.Problems, error) {
	if paths == nil {
		paths = []string{}
	}
	params, err := json.Marshal(diagnosticsParams{SessionID: ss.ID(), Paths: paths, WaitMs: wait.Change.Milliseconds(), FirstWaitMs: wait.First.Milliseconds()})
	if err != nil {
		return session.Problems{}, err
	}
	var a *struct {
		Diagnostics []session.Diagnostic `json:"diagnostics"`
		Starting    []string             `json:"starting"`
	}
	if err := s.call(ctx, "editor/diagnostics", params, &a); err != nil {
		var ee *editorError
		if errors.As(err, &ee) {
			return session.Problems{}, fmt.Errorf("the editor answered editor/diagnostics with an error (%d: %s)", ee.Code, ee.Message)
		}
		return session.Problems{}, err
	}
	if a == nil {
		return session.Problems{}, errors.New("the editor answered editor/diagnostics with null")
	}
	for i, d := range a.Diagnostics {
		if d.Path == "" || d.Severity < 1 || d.Severity > 4 {
			return session.Problems{}, fmt.Errorf("the editor's editor/diagnostics answer has a problem without a path or with a severity not 1-4 (diagnostics[%d])", i)
		}
	}
	// Only the files asked about can have been starting (another would be the editor's mistake).
	var starting []string
	for _, p := range a.Starting {
		if slices.Contains(paths, p) && !slices.Contains(starting, p) {
			starting = append(starting, p)
		}
	}
	return session.Problems{Diagnostics: a.Diagnostics, Starting: starting}, nil
}

// lspServers answers lsp/servers {} -> {servers: [{name, folder, state, error?}]}.
func (s *Server) lspServers(*noParams) (any, error) {
	return map[string]any{"servers": s.host.LanguageServers()}, nil
}
