// This file is authentication as ACP has it: the method initialize offers (pid login, run
// by the client in a terminal when it can, else explained by authenticate), authenticate
// itself, and which failures are ACP's auth_required (-32000): a model with no usable key,
// or no model at all, which pid login sets up.

package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pid-agent/pid/session"
)

// authMethodID is the id of pid's one authentication method.
const authMethodID = "pid-login"

// authMethod is an ACP AuthMethod: terminal-type (the client runs pid with Args in a
// terminal) or agent-type (authenticate does it).
type authMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Type        string   `json:"type"`
	Args        []string `json:"args,omitempty"`
}

// authMethods is what initialize offers: pid login run in a terminal when the client can
// do that (clientCapabilities.auth.terminal, or the older _meta["terminal-auth"]), else an
// agent method whose authenticate says how to log in.
func authMethods(terminal bool) []authMethod {
	if terminal {
		return []authMethod{{
			ID: authMethodID, Name: "Log in to a model provider", Type: "terminal", Args: []string{"login"},
			Description: "Runs pid login: choose a provider (Anthropic, OpenAI or an OpenAI-compatible server), paste its API key and pick a default model. The key is saved in pid's credentials file, readable by you only.",
		}}
	}
	return []authMethod{{
		ID: authMethodID, Name: "Log in to a model provider", Type: "agent",
		Description: "Run pid login in a terminal (choose a provider, paste its API key, pick a default model), or set ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment your editor starts pid in; then authenticate again.",
	}}
}

// terminalAuth reports whether the client declared terminal authentication: auth.terminal
// true, or _meta["terminal-auth"] true (what the ACP Registry's own validator sends). A
// member of the wrong type counts as not declared, as ACP's schema has it.
func terminalAuth(auth, meta json.RawMessage) bool {
	var a struct {
		Terminal bool `json:"terminal"`
	}
	if json.Unmarshal(auth, &a) == nil && a.Terminal {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return false
	}
	var on bool
	return json.Unmarshal(m["terminal-auth"], &on) == nil && on
}

type authenticateParams struct {
	MethodID string `json:"methodId"`
}

// authenticate answers {} when pid can call the model the user settings name (pid login
// was run, or the key is in pid's environment), else auth_required saying what to do.
// An unknown method is -32602.
func (s *server) authenticate(p *authenticateParams) (any, error) {
	if p.MethodID != authMethodID {
		return nil, fmt.Errorf("%w: unknown authentication method %q; pid's one method is %q", errInvalidParams, p.MethodID, authMethodID)
	}
	if err := s.host.UserModelProblem(); err != nil {
		return nil, err
	}
	return nil, nil
}

// authError returns the auth_required error err stands for: a SetupError saying that there
// is no model (noModel, untrustedSetting) or no key for it (apiKeyMissing), all of which
// pid login fixes; nil for any other error. Its data is the SetupError's.
func authError(err error) error {
	var se *session.SetupError
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Reason {
	case session.SetupNoModel, session.SetupAPIKeyMissing, session.SetupUntrustedSetting:
		if se.Reason == session.SetupUntrustedSetting && !errors.Is(err, session.ErrNoModel) {
			return nil
		}
		msg := se.Error()
		if !strings.Contains(msg, "pid login") {
			msg += " Or run pid login in a terminal: it saves a key and a default model."
		}
		return &withData{err: fmt.Errorf("%w: %s", errAuthRequired, msg), data: se.Data()}
	}
	return nil
}

// keyProblem returns the session's model problem when it is a model without a usable key
// (apiKeyMissing), which session/new answers with auth_required; nil otherwise. A session
// with no model at all is still made (its prompts answer auth_required, and the person may
// run pid login meanwhile), as it always was.
func keyProblem(ss *session.Session) error {
	var se *session.SetupError
	if err := ss.ModelProblem(); errors.As(err, &se) && se.Reason == session.SetupAPIKeyMissing {
		return err
	}
	return nil
}
