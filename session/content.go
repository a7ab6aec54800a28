// This file turns what a person sends (text, and content blocks in the Agent Client
// Protocol's shape) into the one user message the model receives (prompt.UserMessage), with
// what the session's model takes.

package session

import (
	"encoding/json"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
)

// UserMessage returns the user message of a prompt, a steer or a follow-up (see
// prompt.UserMessage): paths are shown relative to the session's working folder, and an
// image is left out, with a note, when the session's model takes none. field names the
// blocks in error messages ("content" gives content[2]: ...).
//
// Contract: safe for concurrent use; pure but for reading the session's model. It fails with
// ErrInvalid, naming the block's index, for a block that is not an object, lacks what its
// type needs, or has an unknown type, and for a message with neither text nor blocks.
func (s *Session) UserMessage(field string, text *string, blocks []json.RawMessage) (llm.Message, error) {
	m := s.currentModel()
	msg, err := prompt.UserMessage(field, text, blocks, prompt.Attach{Cwd: s.ws.Cwd(), Images: m.Images, Model: m.Name})
	if err != nil {
		return llm.Message{}, invalid("%v", err)
	}
	return msg, nil
}
