// This file holds the client's file system: fs/read_text_file and fs/write_text_file, which
// let an agent see unsaved editor buffers and make its edits land in the editor. They are
// only ever called when the client declared them in initialize.
//
// Not wired yet: pid's file tools (package tools) read and write the disk through their
// Workspace and have no hook for another file system, so nothing calls clientFiles today.
// What is missing is described in docs/acp.md ("The client's file system").

package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pid-agent/pid/session"
)

// errNotDeclared is returned for a client method the client did not declare.
var errNotDeclared = errors.New("the client did not declare this capability")

// clientFiles is one session's view of the client's file system.
type clientFiles struct {
	s         *server
	sessionID string
}

// files returns a session's client file system and whether the client declared reading
// and writing text files.
func (s *server) files(sessionID string) (f clientFiles, canRead, canWrite bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clientFiles{s: s, sessionID: sessionID}, s.caps.ReadTextFile, s.caps.WriteTextFile
}

type readTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
}

type writeTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// ReadTextFile reads an absolute path through the client, as the editor has it (unsaved
// changes included): from line (1-based; 0 for the start) at most limit lines (0: all).
func (f clientFiles) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	if _, canRead, _ := f.s.files(f.sessionID); !canRead {
		return "", fmt.Errorf("fs/read_text_file: %w", errNotDeclared)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("fs/read_text_file: the path must be absolute, not %q", path)
	}
	p := readTextFileParams{SessionID: f.sessionID, Path: path}
	if line > 0 {
		p.Line = &line
	}
	if limit > 0 {
		p.Limit = &limit
	}
	var res struct {
		Content *string `json:"content"`
	}
	if err := f.s.conn.call(ctx, "fs/read_text_file", p, &res); err != nil {
		return "", fmt.Errorf("fs/read_text_file %s: %w", path, err)
	}
	if res.Content == nil {
		return "", fmt.Errorf("fs/read_text_file %s: the answer has no content", path)
	}
	return *res.Content, nil
}

// WriteTextFile writes an absolute path through the client, which creates the file if
// needed and shows the change in the editor.
func (f clientFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if _, _, canWrite := f.s.files(f.sessionID); !canWrite {
		return fmt.Errorf("fs/write_text_file: %w", errNotDeclared)
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("fs/write_text_file: the path must be absolute, not %q", path)
	}
	p := writeTextFileParams{SessionID: f.sessionID, Path: path, Content: content}
	if err := f.s.conn.call(ctx, "fs/write_text_file", p, nil); err != nil {
		return fmt.Errorf("fs/write_text_file %s: %w", path, err)
	}
	return nil
}

// editorFiles gives a session's file tools the client's file system for what the client
// declared (reading, writing, or both), or nil when it declared neither: then the tools use
// the disk, and no fs/* method is ever called.
func (s *server) editorFiles(sessionID string) *session.EditorFiles {
	f, canRead, canWrite := s.files(sessionID)
	if !canRead && !canWrite {
		return nil
	}
	var ef session.EditorFiles
	if canRead {
		ef.Read = func(ctx context.Context, path string) (string, error) { return f.ReadTextFile(ctx, path, 0, 0) }
	}
	if canWrite {
		ef.Write = f.WriteTextFile
	}
	return &ef
}
