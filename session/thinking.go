// This file holds a session's thinking level, read and changed apart from the rest of its
// model, for faces that offer it as a setting of its own (ACP's thought_level option).

package session

// Thinking returns the thinking level of the session's model now: "off", "low", "medium"
// or "high" ("off" when the model names none, or there is no model).
func (s *Session) Thinking() string { return s.currentModel().Thinking() }

// SetThinking makes level the thinking level of the session's model from its next model call
// on, the model otherwise the same; the change is saved as SetModel saves one.
//
// Contract: safe for concurrent use, also while a prompt runs. It fails, changing nothing,
// with a SetupError: invalidModel naming "thinking" for a level that is not "off", "low",
// "medium" or "high", the missing model's error when the session has none, or what SetModel
// would fail with (its key's variable unset).
func (s *Session) SetThinking(level string) error {
	m, err := modelKinds.WithThinking(s.currentModel(), level, s.noModelError)
	if err != nil {
		return err
	}
	s.setModel(m)
	return nil
}
