// This file connects initialize to the session layer's host (the workspace folders, the
// settings, the remembered answers), serves the permissions/* and trust/* methods, and asks
// the editor to trust a workspace folder whose settings were partly ignored.

package rpc

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/pid-agent/pid/session"
)

// workspaceRoots returns the folders of initialize's workspaceFolders, else of rootUri or
// rootPath, as absolute paths. The last two are deprecated in LSP, and still what older
// clients (Neovim 0.7's vim.lsp.rpc callers, say) send.
func workspaceRoots(p *protocol.InitializeParams) ([]string, error) {
	var uris []string
	for _, f := range p.WorkspaceFolders {
		uris = append(uris, f.URI)
	}
	//lint:ignore SA1019 the fallback for clients that send no workspaceFolders
	if len(uris) == 0 && p.RootURI != "" {
		//lint:ignore SA1019 as above
		uris = append(uris, string(p.RootURI))
	}
	roots, err := session.WorkspaceRoots(uris)
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the fallback for clients that send neither
	if len(roots) == 0 && p.RootPath != "" {
		//lint:ignore SA1019 as above
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

func (s *Server) permissionsList(*noParams) (any, error) {
	return s.host.Permissions()
}

// revokeParams are permissions/revoke's params.
type revokeParams struct {
	ID string `json:"id"`
}

func (s *Server) permissionsRevoke(p *revokeParams) (any, error) {
	return nil, s.host.Revoke(p.ID)
}

// askTrust puts a trust question to the editor: workspace/requestTrust when it declared
// capabilities.experimental.pid.trust, else a window/showMessage warning saying what was
// ignored and how to trust the folder. It returns at once; the request waits on a goroutine
// of its own (shutdown gives it up).
func (s *Server) askTrust(q session.TrustQuestion) {
	s.mu.Lock()
	declared := s.clientTrust
	s.mu.Unlock()
	if !declared {
		s.notify("window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: fmt.Sprintf(
			"pid: the workspace folder %s is not trusted, so its .pid/settings.json may only narrow what pid does. Ignored: %s. To trust it, add it to \"trustedFolders\" in your user settings (~/.config/pid/settings.json).",
			q.Folder, strings.Join(q.Ignored, "; "))})
		return
	}
	params, err := json.Marshal(trustRequest{Folder: q.Folder, Ignored: q.Ignored})
	if err != nil {
		s.log.Error("encoding workspace/requestTrust", "err", err)
		return
	}
	s.bgWG.Add(1)
	go func() {
		defer s.bgWG.Done()
		var a *trustAnswer
		if err := s.call(s.bg, "workspace/requestTrust", params, &a); err != nil {
			if s.bg.Err() == nil {
				s.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("workspace/requestTrust for %s failed; the folder stays untrusted: %v", q.Folder, err))
			}
			return
		}
		if a == nil || !a.Trusted {
			return
		}
		if err := s.host.Trust(q.Folder); err != nil {
			s.logMessage(protocol.MessageTypeWarning, fmt.Sprintf("trusting %s failed: %v", q.Folder, err))
			return
		}
		// Said once it is in force, so an editor (or a fixture) knows when it applies.
		s.notify("window/logMessage", &protocol.LogMessageParams{Type: protocol.MessageTypeInfo, Message: fmt.Sprintf("pid: %s is trusted: its settings apply in full from now on", q.Folder)})
	}()
}

func (s *Server) trustList(*noParams) (any, error) {
	folders, err := s.host.TrustList()
	if err != nil {
		return nil, err
	}
	return &trustListResult{Folders: folders}, nil
}

func (s *Server) trustGrant(p *folderParams) (any, error) {
	return nil, s.host.Trust(p.Folder)
}

func (s *Server) trustRevoke(p *folderParams) (any, error) {
	return nil, s.host.Untrust(p.Folder)
}
