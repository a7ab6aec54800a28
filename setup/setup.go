// Package setup words the failures a person fixes in their own setup (a settings file, the
// environment pid starts in, the editor's settings) for that person, with a machine-readable
// reason a face sends along so that its client can say the same in its own words. Its entry
// point is Error, made by NoModel, Untrusted, InvalidModel and APIKeyMissing; each stands for
// an error of the session layer (kind), which errors.Is matches.
package setup

import (
	"errors"
	"fmt"

	"github.com/pid-agent/pid/settings"
)

// Reason says, for a client's program, which setup problem an Error is. The set is closed:
// a client may map each value to its own words and show the message for others.
type Reason string

// The setup reasons.
const (
	// NoModel: no model is configured for the session (Setting "model", File the user
	// settings file).
	NoModel Reason = "noModel"
	// APIKeyMissing: the environment variable that should hold the model's API key is
	// unset or empty in pid's environment (Variable names it; Setting "model").
	APIKeyMissing Reason = "apiKeyMissing"
	// InvalidModel: a model configuration is not usable (Setting "model", Field the member
	// at fault when one is, File the settings file it came from when it came from one).
	InvalidModel Reason = "invalidModel"
	// UntrustedSetting: what is missing is set by a workspace folder that is not trusted,
	// whose setting was therefore ignored (Setting names it, Folder and File say where).
	UntrustedSetting Reason = "untrustedSetting"
)

// Error is a failure a person fixes in their setup. Its message says what to change and
// where, in a person's words (a settings file and its key, an environment variable), never
// in protocol fields. A face sends Data along with the message.
type Error struct {
	Reason Reason
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

func (e *Error) Error() string { return e.msg }

// Unwrap returns the layer's error the setup error stands for.
func (e *Error) Unwrap() error { return e.kind }

// Data returns the machine-readable part a face sends with the message: reason, then the
// non-empty ones of setting, field, file, folder and variable.
func (e *Error) Data() map[string]string {
	d := map[string]string{"reason": string(e.Reason)}
	for k, v := range map[string]string{"setting": e.Setting, "field": e.Field, "file": e.File, "folder": e.Folder, "variable": e.Variable} {
		if v != "" {
			d[k] = v
		}
	}
	return d
}

// Is reports whether err is an Error.
func Is(err error) bool {
	var se *Error
	return errors.As(err, &se)
}

// UserSettingsFile names the user settings file as a person finds it: the real path pid
// reads ($XDG_CONFIG_HOME/pid/settings.json), or the usual place when it cannot be known.
func UserSettingsFile() string {
	p, err := settings.UserPath()
	if err != nil {
		return "~/.config/pid/settings.json"
	}
	return p
}

// modelExample is what a person can paste as a model setting.
const modelExample = `{"model": {"provider": "anthropic", "id": "claude-sonnet-4-5"}}`

// NoModelError is the Error, standing for kind, of a session whose settings name no model
// (user is the user settings file).
func NoModelError(user string, kind error) error {
	return &Error{Reason: NoModel, Setting: "model", File: user, kind: kind,
		msg: fmt.Sprintf(`pid has no model for this session: set "model" in %s, e.g. %s (its key is read from ANTHROPIC_API_KEY, or OPENAI_API_KEY for "openai", in the environment pid starts in), or choose a model in your editor.`,
			user, modelExample)}
}

// Untrusted is the Error, standing for kind, of a session without model whose workspace
// folder root sets one in file, but is not trusted (user is the user settings file).
func Untrusted(root, file, user string, kind error) error {
	return &Error{Reason: UntrustedSetting, Setting: "model", Folder: root, File: file, kind: kind,
		msg: fmt.Sprintf(`pid has no model for this session: the workspace folder %s sets "model" in %s, but that folder is not trusted, so its model is not used (it could send your key elsewhere). Trust the folder, or set "model" in your user settings %s, e.g. %s.`,
			root, file, user, modelExample)}
}

// Source says where a model configuration came from, for messages: a settings file (File
// set), a saved session (Saved), or else the editor (session/new, initializationOptions,
// session/setModel).
type Source struct {
	// File is the settings file the model came from; "" when it came from none.
	File string
	// Saved is set for the model a loaded or forked session was saved with.
	Saved bool
}

// Where returns the source in a person's words.
func (src Source) Where() string {
	switch {
	case src.File != "":
		return `"model" in ` + src.File
	case src.Saved:
		return "the model this session was saved with"
	}
	return "the model your editor gave pid"
}

// InvalidModelError is the Error, standing for kind, of a model configuration from src that
// cannot be used: field is the member at fault ("" for none), why says what is wrong.
func InvalidModelError(src Source, field, why string, kind error) error {
	return &Error{Reason: InvalidModel, Setting: "model", Field: field, File: src.File, kind: kind,
		msg: src.Where() + ": " + why}
}

// KeyMissing is the Error, standing for kind, of model name (from src) whose key variable
// is unset in pid's environment, and for whose server pid login saved no key. named is set
// when the configuration's apiKeyEnv named the variable; fileErr, when set, is why pid
// login's credentials file could not be read.
func KeyMissing(src Source, name, variable string, named bool, fileErr, kind error) error {
	how := fmt.Sprintf(`set %s in the environment your editor starts pid in (for example export %s=... in your shell profile, then restart the editor)`, variable, variable)
	var msg string
	if named {
		msg = fmt.Sprintf(`The model %s (%s) reads its API key from %s, as its "apiKeyEnv" says, but %s is not set: %s.`, name, src.Where(), variable, variable, how)
	} else {
		msg = fmt.Sprintf(`The model %s (%s) needs an API key, and %s is not set: run pid login in a terminal, %s, or name the variable that holds the key in "apiKeyEnv" of that model.`, name, src.Where(), variable, how)
	}
	if fileErr != nil {
		msg += fmt.Sprintf(" (pid login's credentials file was not read: %v)", fileErr)
	}
	return &Error{Reason: APIKeyMissing, Setting: "model", Field: "apiKeyEnv", File: src.File, Variable: variable,
		kind: kind, msg: msg}
}
