// This file reads the settings files' "acp" object: how pid uses an ACP client's own
// facilities. Only the user's file counts: it is about the person's editor, not a project.

package settings

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/internal/elide"
)

// ACP is the "acp" object: {"terminals"?: bool}.
type ACP struct {
	// NoTerminals is "terminals": false: bash runs its commands itself even when the
	// client offers its terminals (clientCapabilities.terminal).
	NoTerminals bool
}

// parseACP checks a settings file's "acp" value.
func parseACP(top map[string]json.RawMessage) (ACP, error) {
	raw, ok := top["acp"]
	if !ok || string(raw) == "null" {
		return ACP{}, nil
	}
	var a struct {
		Terminals *bool `json:"terminals"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return ACP{}, fmt.Errorf(`acp must be an object {"terminals"?: true|false}, not %s`, elide.Quote(raw))
	}
	return ACP{NoTerminals: a.Terminals != nil && !*a.Terminals}, nil
}

// ACP returns the user settings' "acp".
//
// Contract: safe for concurrent use; never blocks, never reads files.
func (l *Loader) ACP() ACP { return l.cur.Load().acp }
