// This file reads the settings files' "checkpoints" object: whether pid keeps what the
// tools change so that a run can be rewound, and how much it may keep. Only the user's
// file counts: a workspace cannot turn off the person's undo nor make pid keep more.

package settings

import (
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/internal/elide"
)

// Checkpoints is the "checkpoints" object: {"enabled"?: bool, "maxBytes"?: int}.
type Checkpoints struct {
	// Disabled is "enabled": false.
	Disabled bool
	// MaxBytes bounds the store (0: the default, 2 GiB).
	MaxBytes int64
}

// parseCheckpoints checks a settings file's "checkpoints" value.
func parseCheckpoints(top map[string]json.RawMessage) (Checkpoints, error) {
	raw, ok := top["checkpoints"]
	if !ok || string(raw) == "null" {
		return Checkpoints{}, nil
	}
	var c struct {
		Enabled  *bool  `json:"enabled"`
		MaxBytes *int64 `json:"maxBytes"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Checkpoints{}, fmt.Errorf(`checkpoints must be an object {"enabled"?: true|false, "maxBytes"?: bytes}, not %s`, elide.Quote(raw))
	}
	out := Checkpoints{Disabled: c.Enabled != nil && !*c.Enabled}
	if c.MaxBytes != nil {
		if *c.MaxBytes <= 0 {
			return Checkpoints{}, fmt.Errorf("checkpoints.maxBytes must be a positive number of bytes, not %d", *c.MaxBytes)
		}
		out.MaxBytes = *c.MaxBytes
	}
	return out, nil
}

// Checkpoints returns the user settings' "checkpoints".
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Checkpoints() Checkpoints { return l.cur.Load().checkpoints }

// Hooks returns the "hooks" settings for a folder: the user settings' and those of the
// workspace root holding the folder, with whether that root is trusted (an untrusted root's
// hooks must not run). The values were checked when their files were read.
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) Hooks(folder string) (user, workspace json.RawMessage, trusted bool) {
	s := l.cur.Load()
	root, ok := s.rootOf(folder)
	if !ok {
		return s.userHooks, nil, true
	}
	return s.userHooks, s.rootHooks[root], s.trusted[root]
}
