// This file asks the editor for the problems its language servers see (editor/diagnostics,
// when it declared capabilities.experimental.pid.diagnostics) and answers lsp/servers, the
// state of pid's own language servers.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/pid-agent/pid/session"
)

func init() {
	quickMethods["lsp/servers"] = (*Server).lspServers
}

// ReportsDiagnostics implements session.DiagnosticsFace: whether the editor declared
// capabilities.experimental.pid.diagnostics.
func (s *Server) ReportsDiagnostics() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientDiag
}

// diagnosticsParams are editor/diagnostics' params.
type diagnosticsParams struct {
	SessionID string   `json:"sessionId"`
	Paths     []string `json:"paths"`
	WaitMs    int64    `json:"waitMs"`
}

// Diagnostics implements session.DiagnosticsFace: editor/diagnostics. ctx bounds the wait
// (s.call sends $/cancelRequest when it ends first).
func (s *Server) Diagnostics(ctx context.Context, ss *session.Session, paths []string, wait time.Duration) ([]session.Diagnostic, error) {
	if paths == nil {
		paths = []string{}
	}
	params, err := json.Marshal(diagnosticsParams{SessionID: ss.ID(), Paths: paths, WaitMs: wait.Milliseconds()})
	if err != nil {
		return nil, err
	}
	var a *struct {
		Diagnostics []session.Diagnostic `json:"diagnostics"`
	}
	if err := s.call(ctx, "editor/diagnostics", params, &a); err != nil {
		var ee *editorError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("the editor answered editor/diagnostics with an error (%d: %s)", ee.Code, ee.Message)
		}
		return nil, err
	}
	if a == nil {
		return nil, errors.New("the editor answered editor/diagnostics with null")
	}
	for i, d := range a.Diagnostics {
		if d.Path == "" || d.Severity < 1 || d.Severity > 4 {
			return nil, fmt.Errorf("the editor's editor/diagnostics answer has a problem without a path or with a severity not 1-4 (diagnostics[%d])", i)
		}
	}
	return a.Diagnostics, nil
}

// lspServers answers lsp/servers {} -> {servers: [{name, folder, state, error?}]}.
func (s *Server) lspServers(*jsonrpc2.Request) (any, error) {
	return map[string]any{"servers": s.host.LanguageServers()}, nil
}
