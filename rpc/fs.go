// This file gives a session's file tools the editor's buffers: fs/read_text_file and
// fs/write_text_file, pid's requests to an editor that declared them under
// capabilities.experimental.pid.fs, so that read and edit see unsaved changes and every
// change lands in the editor.

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pid-agent/pid/session"
)

// editorFiles returns the editor's side of the file tools of session id: reads through
// fs/read_text_file when the editor declared readTextFile, writes through fs/write_text_file
// when it declared writeTextFile; nil when it declared neither (the tools use the disk, and
// neither request is ever sent). The tools call them only for paths they would have read or
// written themselves (see session.EditorFiles).
func (s *Server) editorFiles(id string) *session.EditorFiles {
	s.mu.Lock()
	canRead, canWrite := s.clientRead, s.clientWrite
	s.mu.Unlock()
	if !canRead && !canWrite {
		return nil
	}
	var ef session.EditorFiles
	if canRead {
		ef.Read = func(ctx context.Context, path string) (string, error) {
			params, err := json.Marshal(readTextFileParams{SessionID: id, Path: path})
			if err != nil {
				return "", err
			}
			var a *readTextFileAnswer
			if err := s.call(ctx, "fs/read_text_file", params, &a); err != nil {
				return "", editorFileError(ctx, "read", "read", path, err)
			}
			if a == nil || a.Content == nil {
				return "", fmt.Errorf("the editor answered the request to read %s without the file's content; nothing was read", path)
			}
			return *a.Content, nil
		}
	}
	if canWrite {
		ef.Write = func(ctx context.Context, path, text string) error {
			params, err := json.Marshal(writeTextFileParams{SessionID: id, Path: path, Content: text})
			if err != nil {
				return err
			}
			if err := s.call(ctx, "fs/write_text_file", params, nil); err != nil {
				return editorFileError(ctx, "write", "written", path, err)
			}
			return nil
		}
	}
	return &ef
}

// editorFileError is the error a file tool fails with when the editor did not do what it
// was asked (what is "read" or "write", done its participle): the editor's own message when
// it answered with an error, the cancellation when the call was aborted.
func editorFileError(ctx context.Context, what, done, path string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ee *editorError
	if errors.As(err, &ee) {
		return fmt.Errorf("the editor could not %s %s: %s", what, path, ee.Message)
	}
	return fmt.Errorf("the editor did not answer the request to %s %s (%v); nothing was %s", what, path, err, done)
}
