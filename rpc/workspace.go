// This file sets up what sessions share: the workspace folders the editor named, the
// settings files (permissions, redaction), the remembered answers, the audit log; and the
// permissions/* methods.

package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/afterrules"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/tools"
)

// workspaceRoots returns the folders of initialize's workspaceFolders, else of rootUri or
// rootPath, as absolute paths. A folder that is not a file: URI is an invalid-params error.
func workspaceRoots(p *protocol.InitializeParams) ([]string, error) {
	var uris []string
	for _, f := range p.WorkspaceFolders {
		uris = append(uris, f.URI)
	}
	if len(uris) == 0 && p.RootURI != "" {
		uris = append(uris, string(p.RootURI))
	}
	var roots []string
	for _, u := range uris {
		path, err := fileURIPath(u)
		if err != nil {
			return nil, invalidParams("workspace folder %q: %v", u, err)
		}
		roots = append(roots, path)
	}
	if len(roots) == 0 && p.RootPath != "" {
		roots = append(roots, filepath.Clean(p.RootPath))
	}
	return roots, nil
}

func fileURIPath(u string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if parsed.Scheme != "file" {
		return "", errors.New("only file: URIs are supported")
	}
	if parsed.Path == "" || !filepath.IsAbs(parsed.Path) {
		return "", errors.New("the URI has no absolute path")
	}
	return filepath.Clean(parsed.Path), nil
}

// setUp loads the settings files and opens the store and the audit log. Failures are told
// to the editor; pid then runs without that part (no remembered answers, no audit log).
func (s *Server) setUp(roots []string) {
	s.loader = permissions.NewLoader(permissions.LoaderOptions{
		WorkspaceRoots: roots,
		OnError: func(path string, err error) {
			msg := fmt.Sprintf("settings: %s: %v (the previous settings stay in force)", path, err)
			if path == "" {
				msg = fmt.Sprintf("settings: %v", err)
			}
			s.logMessage(protocol.MessageTypeError, msg)
			s.notify("window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "pid " + msg})
		},
	})
	s.redactor = afterrules.NewRedactor(s.loader.RedactPatterns)
	var err error
	if s.store, err = permissions.OpenStore(""); err != nil {
		s.store = nil
		s.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("remembered permissions are not available: %v", err))
	}
	if s.audit, err = afterrules.OpenAuditLog(""); err != nil {
		s.audit = nil
		s.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("the audit log is not available: %v", err))
	}
}

// settingsModel returns the model named in the settings files (the user's, then each
// workspace folder's, later ones winning), or nil. It is read when a session starts, so a
// change applies to the next session.
func settingsModel(roots []string) *modelConfig {
	var files []string
	if p, err := permissions.UserSettingsPath(); err == nil {
		files = append(files, p)
	}
	for _, r := range roots {
		files = append(files, permissions.WorkspaceSettingsPath(r))
	}
	var model *modelConfig
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st struct {
			Model *modelConfig `json:"model"`
		}
		if json.Unmarshal(b, &st) == nil && st.Model != nil {
			model = st.Model
		}
	}
	return model
}

// closeAll releases what setUp and the sessions opened.
func (s *Server) closeAll() {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.ws.Close()
	}
	if s.loader != nil {
		s.loader.Close()
	}
	if s.audit != nil {
		s.audit.Close()
	}
}

// workspace returns a session's workspace: its cwd (default: the first workspace folder,
// else pid's own working folder) confined to the editor's folders (default: the cwd).
func (s *Server) workspace(cwd string) (*tools.Workspace, error) {
	s.mu.Lock()
	roots := s.roots
	s.mu.Unlock()
	if cwd == "" {
		if len(roots) > 0 {
			cwd = roots[0]
		} else if wd, err := os.Getwd(); err == nil {
			cwd = wd
		}
	}
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd must be an absolute path, not %q", cwd)
	}
	ws, err := tools.NewWorkspace(filepath.Clean(cwd), roots)
	if err != nil {
		return nil, invalidParams("cwd: %v", err)
	}
	return ws, nil
}

var (
	builtinOnce  sync.Once
	builtinInfos []toolInfo
)

// builtinToolInfos lists the built-in tools every session has, for initialize.
func builtinToolInfos() []toolInfo {
	builtinOnce.Do(func() {
		builtinInfos = []toolInfo{}
		ws, err := tools.NewWorkspace(os.TempDir(), nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for _, t := range tools.New(ws) {
			mode := string(t.ExecutionMode)
			if mode == "" {
				mode = "parallel"
			}
			params := t.Parameters
			if len(params) == 0 {
				params = []byte(`{"type":"object"}`)
			}
			builtinInfos = append(builtinInfos, toolInfo{Name: t.Name, Description: t.Description, Parameters: params, ExecutionMode: mode})
		}
	})
	return builtinInfos
}

func (s *Server) permissionsList(req *jsonrpc2.Request) (any, error) {
	if s.store == nil {
		return nil, fmt.Errorf("%w: remembered permissions are not available (see pid's log)", errFailed)
	}
	res, err := s.store.List()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFailed, err)
	}
	return res, nil
}

func (s *Server) permissionsRevoke(req *jsonrpc2.Request) (any, error) {
	var p struct {
		ID string `json:"id"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, invalidParams("id is required")
	}
	if s.store == nil {
		return nil, fmt.Errorf("%w: remembered permissions are not available (see pid's log)", errFailed)
	}
	if err := s.store.Revoke(p.ID); err != nil {
		if errors.Is(err, permissions.ErrUnknownID) {
			return nil, invalidParams("%v", err)
		}
		return nil, fmt.Errorf("%w: %v", errFailed, err)
	}
	return nil, nil
}
