// This file reads the settings files' "sandbox" object (see the sandbox package for its
// meaning) and gives each folder's sources to the session layer, which merges them with
// sandbox.Resolve: the user's, and the workspace folder's with whether it is trusted (an
// untrusted folder's may only narrow); and the user's "allowBypassPermissions", which
// offers the mode that skips every question and the sandbox's asking.

package settings

import (
	"encoding/json"

	"github.com/pid-agent/pid/sandbox"
)

// parseSandbox checks a settings file's "sandbox" value and returns it; nil when absent.
func parseSandbox(top map[string]json.RawMessage) (json.RawMessage, error) {
	raw, ok := top["sandbox"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	if _, err := sandbox.Parse(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Sandbox returns the "sandbox" settings for a folder: the user settings' and those of the
// workspace root holding the folder, with whether that root is trusted. Either may be the
// zero sandbox.Settings. The values were checked when their files were read.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Sandbox(folder string) (user, workspace sandbox.Settings, trusted bool) {
	s := l.cur.Load()
	user, _ = sandbox.Parse(s.userSandbox)
	root, ok := s.rootOf(folder)
	if !ok {
		return user, sandbox.Settings{}, true
	}
	workspace, _ = sandbox.Parse(s.rootSandbox[root])
	return user, workspace, s.trusted[root]
}

// AllowBypassPermissions reports whether the user settings say "allowBypassPermissions":
// true (a workspace's file never can).
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) AllowBypassPermissions() bool { return l.cur.Load().allowBypass }
