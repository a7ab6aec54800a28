// This file holds the session configuration pid offers ACP clients: the mode (ACP's
// SessionModeState in modes, session/set_mode, current_mode_update) and the configuration
// options (configOptions in session/new, session/load and session/resume, and
// session/set_config_option, config_option_update): the mode, the model and the thinking
// level, in that order.

package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/internal/title"
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

// The options' ids.
const (
	modeID         = "mode"
	modelID        = "model"
	thoughtLevelID = "thought_level"
)

// thoughtLevels are the thinking level's values, in the order a client lists them.
var thoughtLevels = []configValue{
	{Value: "off", Name: "Off", Description: "No extended thinking or reasoning effort is asked for"},
	{Value: "low", Name: "Low"},
	{Value: "medium", Name: "Medium"},
	{Value: "high", Name: "High"},
}

// modeOption is the mode's option: the session's mode and the modes it is offered.
func modeOption(ss *session.Session) configOption {
	m := ss.Modes()
	opt := configOption{ID: modeID, Name: "Mode", Category: "mode", Type: "select",
		Description:  "Which calls run without asking",
		CurrentValue: m.CurrentModeID, Options: []configValue{}}
	for _, a := range m.AvailableModes {
		opt.Options = append(opt.Options, configValue{Value: a.ID, Name: a.Name, Description: a.Description})
	}
	return opt
}

// modelValue is a model's value in the model option: PROVIDER/ID.
func modelValue(m session.ModelInfo) string { return m.Provider + "/" + m.ID }

// modelOption is the model's option: the session's model and the settings' "models" list
// (the session's model first among them when the list lacks it). ok is false when the
// session has no model, or its host does not know it: no option is offered then.
func modelOption(host *session.Host, ss *session.Session) (opt configOption, ok bool) {
	list, err := host.ModelList(ss.ID(), nil)
	if err != nil || list.Current == nil {
		return configOption{}, false
	}
	opt = configOption{ID: modelID, Name: "Model", Category: "model", Type: "select",
		CurrentValue: modelValue(*list.Current), Options: []configValue{}}
	listed := false
	for _, m := range list.Models {
		listed = listed || modelValue(m) == opt.CurrentValue
		opt.Options = append(opt.Options, configValue{Value: modelValue(m), Name: title.Or(m.Name, modelValue(m))})
	}
	if !listed {
		cur := configValue{Value: opt.CurrentValue, Name: title.Or(list.Current.Name, opt.CurrentValue)}
		opt.Options = append([]configValue{cur}, opt.Options...)
	}
	return opt, true
}

// configOptions returns the session's configuration options with their current values:
// mode, model (when the session has one) and thinking level.
func configOptions(host *session.Host, ss *session.Session) []configOption {
	out := []configOption{modeOption(ss)}
	if m, ok := modelOption(host, ss); ok {
		out = append(out, m)
	}
	return append(out, configOption{
		ID: thoughtLevelID, Name: "Thinking", Category: "thought_level", Type: "select",
		Description:  "How hard the model thinks before it answers (Anthropic's extended thinking, OpenAI's reasoning effort)",
		CurrentValue: ss.Thinking(), Options: thoughtLevels,
	})
}

// modeState is ACP's SessionModeState: the modes of session/new, load and resume results.
type modeState struct {
	CurrentModeID  string     `json:"currentModeId"`
	AvailableModes []modeInfo `json:"availableModes"`
}

type modeInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// modes returns the session's mode and the modes it may switch to.
func modes(ss *session.Session) *modeState {
	m := ss.Modes()
	out := &modeState{CurrentModeID: m.CurrentModeID, AvailableModes: []modeInfo{}}
	for _, a := range m.AvailableModes {
		out.AvailableModes = append(out.AvailableModes, modeInfo(a))
	}
	return out
}

type currentModeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type configOptionUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []configOption `json:"configOptions"`
}

// modeChanged is the sessions' ModeChanged hook: the client hears the new mode
// (current_mode_update) and the options with it (config_option_update), whoever changed it
// (session/set_mode, session/set_config_option, an approved exit_plan_mode). A request's
// updates are written before its response, since the hook runs within it. Both are read
// under mu, so that of two changes racing, the updates written last say the mode the session
// is in.
func (s *server) modeChanged(ss *session.Session, _ string) {
	st := s.state(ss)
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.update(currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: ss.Mode()})
	st.update(configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: configOptions(st.srv.host, ss)})
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// liveState returns the face's state of a live session, or the error a request naming
// another gets.
func (s *server) liveState(id string) (*sessionState, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	}
	s.mu.Lock()
	st := s.sessions[id]
	s.mu.Unlock()
	if st == nil {
		return nil, notFound(id, "no session %q is active in this pid (session/load or session/resume makes a saved one active)", id)
	}
	return st, nil
}

// sessionSetMode switches a live session's mode (session/set_mode): an unknown mode, or one
// the session is not offered, is invalid params. The next tool calls are decided in it.
func (s *server) sessionSetMode(p *setModeParams) (any, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.setMode(st, p.ModeID); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// setMode switches st's session to mode id, an offered one (else invalid params).
func (s *server) setMode(st *sessionState, id string) error {
	for _, m := range st.ss.Modes().AvailableModes {
		if m.ID == id {
			return st.ss.SetMode(id)
		}
	}
	var ids []string
	for _, m := range st.ss.Modes().AvailableModes {
		ids = append(ids, m.ID)
	}
	return fmt.Errorf("%w: modeId must be one of the session's availableModes (%s), not %q", errInvalidParams, strings.Join(ids, ", "), id)
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
// A mode change is heard as session/set_mode's is; the model and the thinking level apply
// from the session's next model call on, a running prompt's call finishing as it started.
func (s *server) sessionSetConfigOption(p *setConfigOptionParams) (any, error) {
	st, err := s.liveState(p.SessionID)
	if err != nil {
		return nil, err
	}
	var value string
	if err := json.Unmarshal(p.Value, &value); err != nil {
		return nil, fmt.Errorf("%w: value must be the id of one of the option's values (a string)", errInvalidParams)
	}
	switch p.ConfigID {
	case modeID:
		if err := s.setMode(st, value); err != nil {
			return nil, err
		}
	case modelID:
		if err := setModel(st, value); err != nil {
			return nil, err
		}
	case thoughtLevelID:
		known := false
		for _, v := range thoughtLevels {
			known = known || v.Value == value
		}
		if !known {
			return nil, fmt.Errorf(`%w: %s is "off", "low", "medium" or "high", not %q`, errInvalidParams, thoughtLevelID, value)
		}
		if err := st.ss.SetThinking(value); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: pid has no configuration option %q (it has %s, %s and %s)", errInvalidParams, p.ConfigID, modeID, modelID, thoughtLevelID)
	}
	return &setConfigOptionResult{ConfigOptions: configOptions(st.srv.host, st.ss)}, nil
}

// setModel makes the model value (PROVIDER/ID, one of the model option's values) the
// session's model from its next model call on.
func setModel(st *sessionState, value string) error {
	opt, ok := modelOption(st.srv.host, st.ss)
	known := false
	for _, v := range opt.Options {
		known = known || v.Value == value
	}
	if !ok || !known {
		var vals []string
		for _, v := range opt.Options {
			vals = append(vals, v.Value)
		}
		return fmt.Errorf("%w: %s must be one of the option's values (%s), not %q", errInvalidParams, modelID, strings.Join(vals, ", "), value)
	}
	provider, id, _ := strings.Cut(value, "/")
	raw, err := json.Marshal(map[string]string{"provider": provider, "id": id})
	if err != nil {
		return err
	}
	return st.ss.SetModel(raw)
}
