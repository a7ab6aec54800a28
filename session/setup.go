// This file gives the session layer's names to SetupError (package setup words a failure a
// person fixes in their own setup, with a machine-readable reason a face sends along), and
// says why a session has no model (package sessionmodel makes the setup errors of a model,
// standing for this layer's errors: a missing model (ErrNoModel), a model that cannot be
// used (ErrInvalid), a missing key (ErrFailed)).

package session

import (
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
// but is not trusted, else no setting at all (sessionmodel.Settings.Missing).
func (s *Session) noModelError() error {
	return s.host.modelSettings().Missing(s.ws.Cwd(), s.ws.Roots())
}
