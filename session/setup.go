// This file gives the session layer's names to SetupError (package setup words a failure a
// person fixes in their own setup, with a machine-readable reason a face sends along), and
// makes the ones that stand for this layer's errors: a missing model (ErrNoModel), a model
// that cannot be used (ErrInvalid), a missing key (ErrFailed).

package session

import (
	"fmt"

	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/setup"
)

// SetupReason says, for a client's program, which setup problem a SetupError is. The set is
// closed: a client may map each value to its own words and show the message for others.
type SetupReason = setup.Reason

// The setup reasons (package setup says what each carries).
const (
	SetupNoModel          = setup.NoModel
	SetupAPIKeyMissing    = setup.APIKeyMissing
	SetupInvalidModel     = setup.InvalidModel
	SetupUntrustedSetting = setup.UntrustedSetting
)

// SetupError is a failure a person fixes in their setup. Its message says what to change
// and where, in a person's words; a face sends Data along with the message.
//
// errors.Is matches the layer's error it stands for: ErrNoModel (noModel, and
// untrustedSetting when the setting is the model), ErrInvalid (invalidModel) or ErrFailed
// (apiKeyMissing).
type SetupError = setup.Error

// noModelError is why the session has no model: a workspace folder of its that sets one
// but is not trusted, else no setting at all.
func (s *Session) noModelError() error {
	h, cwd := s.host, s.ws.Cwd()
	user := setup.UserSettingsFile()
	if h.loader != nil {
		for _, root := range s.ws.Roots() {
			if !setup.WithinFolder(cwd, root) || h.loader.Trusted(root) {
				continue
			}
			for _, ignored := range h.loader.Ignored(root) {
				if ignored == "model" {
					return setup.Untrusted(root, settings.WorkspacePath(root), user, ErrNoModel)
				}
			}
		}
	}
	return setup.NoModelError(user, ErrNoModel)
}

// modelSource says where a model configuration came from, for messages.
type modelSource = setup.Source

// invalidModel is a model configuration that cannot be used, with why.
func invalidModel(src modelSource, field, format string, args ...any) error {
	return setup.InvalidModelError(src, field, fmt.Sprintf(format, args...), ErrInvalid)
}

// apiKeyMissing is a model whose key variable is unset in pid's environment (setup.KeyMissing).
func apiKeyMissing(src modelSource, name, variable string, named bool, fileErr error) error {
	return setup.KeyMissing(src, name, variable, named, fileErr, ErrFailed)
}
