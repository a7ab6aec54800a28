// This file holds a session's thinking level, read and changed apart from the rest of its
// model, for faces that offer it as a setting of its own (ACP's thought_level option).

package session

import (
	"github.com/pid-agent/pid/provider"
)

// Thinking returns the thinking level of the session's model now: "off", "low", "medium"
// or "high" ("off" when the model names none, or there is no model).
func (s *Session) Thinking() string {
	if cfg := s.currentModel().cfg; cfg != nil && cfg.Thinking != "" {
		return cfg.Thinking
	}
	return "off"
}

// SetThinking makes level the thinking level of the session's model from its next model call
// on, the model otherwise the same; the change is saved as SetModel saves one.
//
// Contract: safe for concurrent use, also while a prompt runs. It fails, changing nothing,
// with a SetupError: invalidModel naming "thinking" for a level that is not "off", "low",
// "medium" or "high", the missing model's error when the session has none, or what SetModel
// would fail with (its key's variable unset).
func (s *Session) SetThinking(level string) error {
	if err := provider.CheckThinking(level); err != nil {
		return invalidModel(modelSource{}, "thinking", "%v", err)
	}
	cur := s.currentModel()
	if cur.cfg == nil {
		return s.noModelError()
	}
	cfg := *cur.cfg
	cfg.Thinking = level
	if level == "off" {
		cfg.Thinking = ""
	}
	var m *sessionModel
	if cfg.Provider == "script" {
		// A scripted model does not think; it goes on with its next turn.
		same := *cur
		same.cfg = &cfg
		m = &same
	} else {
		var err error
		if m, err = makeModel(&cfg, modelSource{}, 0, 0, true); err != nil {
			return err
		}
	}
	s.model.mu.Lock()
	s.model.cur = m
	s.model.mu.Unlock()
	s.saveModel(&cfg)
	return nil
}
