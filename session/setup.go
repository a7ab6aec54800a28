// This file holds SetupError: a failure a person fixes in their own setup (a settings file,
// the environment pid starts in, the editor's settings), worded for that person, with a
// machine-readable reason a face sends along so that its client can say the same in its own
// words (its own name for the setting).

package session

import (
	"errors"
	"fmt"
	"os"

	"github.com/pid-agent/pid/settings"
)

// SetupReason says, for a client's program, which setup problem a SetupError is. The set is
// closed: a client may map each value to its own words and show the message for others.
type SetupReason string

// The setup reasons.
const (
	// SetupNoModel: no model is configured for the session (Setting "model", File the user
	// settings file).
	SetupNoModel SetupReason = "noModel"
	// SetupAPIKeyMissing: the environment variable that should hold the model's API key is
	// unset or empty in pid's environment (Variable names it; Setting "model").
	SetupAPIKeyMissing SetupReason = "apiKeyMissing"
	// SetupInvalidModel: a model configuration is not usable (Setting "model", Field the
	// member at fault when one is, File the settings file it came from when it came from one).
	SetupInvalidModel SetupReason = "invalidModel"
	// SetupUntrustedSetting: what is missing is set by a workspace folder that is not trusted,
	// whose setting was therefore ignored (Setting names it, Folder and File say where).
	SetupUntrustedSetting SetupReason = "untrustedSetting"
)

// SetupError is a failure a person fixes in their setup. Its message says what to change
// and where, in a person's words (a settings file and its key, an environment variable),
// never in protocol fields. A face sends Data along with the message.
//
// errors.Is matches the layer's error it stands for: ErrNoModel (noModel, and
// untrustedSetting when the setting is the model), ErrInvalid (invalidModel) or ErrFailed
// (apiKeyMissing).
type SetupError struct {
	Reason SetupReason
	// Setting is the settings key to change ("model"); Field the member inside it
	// ("provider", "id"), "" when the whole setting is at fault.
	Setting, Field string
	// File is the settings file to change ("" when the setting did not come from one);
	// Folder the workspace folder concerned (untrustedSetting); Variable the environment
	// variable (apiKeyMissing).
	File, Folder, Variable string

	msg  string
	kind error
}

func (e *SetupError) Error() string { return e.msg }

// Unwrap returns the layer's error the setup error stands for.
func (e *SetupError) Unwrap() error { return e.kind }

// Data returns the machine-readable part a face sends with the message: reason, then the
// non-empty ones of setting, field, file, folder and variable.
func (e *SetupError) Data() map[string]string {
	d := map[string]string{"reason": string(e.Reason)}
	for k, v := range map[string]string{"setting": e.Setting, "field": e.Field, "file": e.File, "folder": e.Folder, "variable": e.Variable} {
		if v != "" {
			d[k] = v
		}
	}
	return d
}

// userSettingsFile names the user settings file as a person finds it: the real path pid
// reads ($XDG_CONFIG_HOME/pid/settings.json), or the usual place when it cannot be known.
func userSettingsFile() string {
	p, err := settings.UserPath()
	if err != nil {
		return "~/.config/pid/settings.json"
	}
	return p
}

// modelExample is what a person can paste as a model setting.
const modelExample = `{"model": {"provider": "anthropic", "id": "claude-sonnet-4-5"}}`

// noModelError is why the session has no model: a workspace folder of its that sets one
// but is not trusted, else no setting at all.
func (s *Session) noModelError() error {
	h, cwd := s.host, s.ws.Cwd()
	user := userSettingsFile()
	if h.loader != nil {
		for _, root := range s.ws.Roots() {
			if !withinFolder(cwd, root) || h.loader.Trusted(root) {
				continue
			}
			for _, ignored := range h.loader.Ignored(root) {
				if ignored != "model" {
					continue
				}
				file := settings.WorkspacePath(root)
				return &SetupError{Reason: SetupUntrustedSetting, Setting: "model", Folder: root, File: file, kind: ErrNoModel,
					msg: fmt.Sprintf(`pid has no model for this session: the workspace folder %s sets "model" in %s, but that folder is not trusted, so its model is not used (it could send your key elsewhere). Trust the folder, or set "model" in your user settings %s, e.g. %s.`,
						root, file, user, modelExample)}
			}
		}
	}
	return noModel(user)
}

// noModel is the SetupError of a session whose settings name no model (user is the user
// settings file).
func noModel(user string) error {
	return &SetupError{Reason: SetupNoModel, Setting: "model", File: user, kind: ErrNoModel,
		msg: fmt.Sprintf(`pid has no model for this session: set "model" in %s, e.g. %s (its key is read from ANTHROPIC_API_KEY, or OPENAI_API_KEY for "openai", in the environment pid starts in), or choose a model in your editor.`,
			user, modelExample)}
}

// withinFolder reports whether the clean absolute path p is folder or inside it.
func withinFolder(p, folder string) bool {
	return p == folder || len(p) > len(folder) && p[:len(folder)] == folder && (folder == "/" || p[len(folder)] == os.PathSeparator)
}

// modelSource says where a model configuration came from, for messages: a settings file
// (File set), a saved session (Saved), or else the editor (session/new,
// initializationOptions, session/setModel).
type modelSource struct {
	// File is the settings file the model came from; "" when it came from none.
	File string
	// Saved is set for the model a loaded or forked session was saved with.
	Saved bool
}

// where returns the source in a person's words.
func (src modelSource) where() string {
	switch {
	case src.File != "":
		return `"model" in ` + src.File
	case src.Saved:
		return "the model this session was saved with"
	}
	return "the model your editor gave pid"
}

// invalidModel is a model configuration that cannot be used, with why.
func invalidModel(src modelSource, field, format string, args ...any) error {
	return &SetupError{Reason: SetupInvalidModel, Setting: "model", Field: field, File: src.File, kind: ErrInvalid,
		msg: src.where() + ": " + fmt.Sprintf(format, args...)}
}

// apiKeyMissing is a model whose key variable is unset in pid's environment, and for whose
// server pid login saved no key. named is set when the configuration's apiKeyEnv named the
// variable; fileErr, when set, is why pid login's credentials file could not be read.
func apiKeyMissing(src modelSource, name, variable string, named bool, fileErr error) error {
	how := fmt.Sprintf(`set %s in the environment your editor starts pid in (for example export %s=... in your shell profile, then restart the editor)`, variable, variable)
	var msg string
	if named {
		msg = fmt.Sprintf(`The model %s (%s) reads its API key from %s, as its "apiKeyEnv" says, but %s is not set: %s.`, name, src.where(), variable, variable, how)
	} else {
		msg = fmt.Sprintf(`The model %s (%s) needs an API key, and %s is not set: run pid login in a terminal, %s, or name the variable that holds the key in "apiKeyEnv" of that model.`, name, src.where(), variable, how)
	}
	if fileErr != nil {
		msg += fmt.Sprintf(" (pid login's credentials file was not read: %v)", fileErr)
	}
	return &SetupError{Reason: SetupAPIKeyMissing, Setting: "model", Field: "apiKeyEnv", File: src.File, Variable: variable,
		kind: ErrFailed, msg: msg}
}

// isSetup reports whether err is a SetupError.
func isSetup(err error) bool {
	var se *SetupError
	return errors.As(err, &se)
}
