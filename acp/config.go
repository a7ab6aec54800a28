// This file holds the session configuration options pid offers ACP clients (configOptions
// in session/new, session/load and session/resume, and session/set_config_option): the
// thinking level now. The mode and model options come beside it in configOptions' list.

package acp

import (
	"encoding/json"

	"github.com/pid-agent/pid/session"
)

// configOption is ACP's SessionConfigOption of type "select".
type configOption struct {
	ID           string        `json:"id"`
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Category     string        `json:"category,omitempty"`
	Type         string        `json:"type"`
	CurrentValue string        `json:"currentValue"`
	Options      []configValue `json:"options"`
}

// configValue is one value of a select option.
type configValue struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// thoughtLevelID is the id of the thinking level's option.
const thoughtLevelID = "thought_level"

// thoughtLevels are the thinking level's values, in the order a client lists them.
var thoughtLevels = []configValue{
	{Value: "off", Name: "Off", Description: "No extended thinking or reasoning effort is asked for"},
	{Value: "low", Name: "Low"},
	{Value: "medium", Name: "Medium"},
	{Value: "high", Name: "High"},
}

// configOptions returns the session's configuration options with their current values.
func configOptions(ss *session.Session) []configOption {
	return []configOption{{
		ID: thoughtLevelID, Name: "Thinking", Category: "thought_level", Type: "select",
		Description:  "How hard the model thinks before it answers (Anthropic's extended thinking, OpenAI's reasoning effort)",
		CurrentValue: ss.Thinking(), Options: thoughtLevels,
	}}
}

type setConfigOptionParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

type setConfigOptionResult struct {
	ConfigOptions []configOption `json:"configOptions"`
}

// sessionSetConfigOption sets one of a live session's options and answers with all of them.
// The thinking level applies from the session's next model call on, a running prompt's
// call finishing as it started.
func (s *server) sessionSetConfigOption(params json.RawMessage) (any, error) {
	var p setConfigOptionParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, errorf(codeInvalidParams, "Invalid params: sessionId is required")
	}
	s.mu.Lock()
	st := s.sessions[p.SessionID]
	s.mu.Unlock()
	if st == nil {
		return nil, notFound(p.SessionID, "no session %q is active in this pid (session/load or session/resume makes a saved one active)", p.SessionID)
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil {
		return nil, errorf(codeInvalidParams, "Invalid params: value must be the id of one of the option's values (a string)")
	}
	switch p.ConfigID {
	case thoughtLevelID:
		known := false
		for _, v := range thoughtLevels {
			known = known || v.Value == value
		}
		if !known {
			return nil, errorf(codeInvalidParams, `Invalid params: %s is "off", "low", "medium" or "high", not %q`, thoughtLevelID, value)
		}
		if err := st.ss.SetThinking(value); err != nil {
			return nil, err
		}
	default:
		return nil, errorf(codeInvalidParams, "Invalid params: pid has no configuration option %q (it has %s)", p.ConfigID, thoughtLevelID)
	}
	return &setConfigOptionResult{ConfigOptions: configOptions(st.ss)}, nil
}
