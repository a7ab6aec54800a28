// This file connects initialize to the session layer's host (the workspace folders, the
// settings, the remembered answers) and serves the permissions/* methods.

package rpc

import (
	"path/filepath"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/session"
)

// workspaceRoots returns the folders of initialize's workspaceFolders, else of rootUri or
// rootPath, as absolute paths.
func workspaceRoots(p *protocol.InitializeParams) ([]string, error) {
	var uris []string
	for _, f := range p.WorkspaceFolders {
		uris = append(uris, f.URI)
	}
	if len(uris) == 0 && p.RootURI != "" {
		uris = append(uris, string(p.RootURI))
	}
	roots, err := session.WorkspaceRoots(uris)
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 && p.RootPath != "" {
		roots = append(roots, filepath.Clean(p.RootPath))
	}
	return roots, nil
}

// report tells the editor about a problem with the settings or pid's own files.
func (s *Server) report(msg string, severe bool) {
	if !severe {
		s.logMessage(protocol.MessageTypeWarning, msg)
		return
	}
	s.logMessage(protocol.MessageTypeError, msg)
	s.notify("window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "pid " + msg})
}

func (s *Server) permissionsList(*jsonrpc2.Request) (any, error) {
	return s.host.Permissions()
}

func (s *Server) permissionsRevoke(req *jsonrpc2.Request) (any, error) {
	var p struct {
		ID string `json:"id"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return nil, s.host.Revoke(p.ID)
}
