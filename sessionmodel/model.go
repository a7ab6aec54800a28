// Package sessionmodel makes a session's model: from its configuration (Kinds.Make), with
// what the settings files add to it (Settings: the model they name, and their "models"
// lists), and words why one cannot be used as a setup error (package setup) a person fixes.
// Its entry point is Kinds.Make. It knows no session: the session layer keeps the model it
// made, swaps it and saves its changes. It reads no file but pid login's credentials, when a
// model's key is missing from the environment.
//
// This file holds a model and how one is made, decoded and given another thinking level.
package sessionmodel

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/setup"
)

// Kinds are the session layer's errors the setup errors of a model stand for (errors.Is
// matches them): NoModel for a session without one, Invalid for a configuration that cannot
// be used, Failed for a missing key.
type Kinds struct {
	NoModel, Invalid, Failed error
}

// Model is a session's model as one value: nothing modifies it once made, so a caller may
// keep one for a whole model call while the session replaces its own.
type Model struct {
	// Config is the configuration, as saved with the session; nil when there is no model.
	Config *provider.Model
	// Source is where Config came from, for messages.
	Source setup.Source
	// Provider is the model to call; nil when Config is nil, or when Problem is set.
	Provider llm.Provider
	// Summarizer answers compactions' summary requests: Provider itself, except for a
	// scripted model, whose summaries are scripted apart from its turns.
	Summarizer llm.Provider
	// Problem is why Config cannot be used now (its API key variable is unset, and pid
	// login saved no key for its server): a prompt fails with it, a setup error.
	Problem error
	// Name is "provider/id", as sampling results name the model.
	Name string
	// Window is the model's context window in tokens.
	Window int
	// Compact is the model's compaction settings.
	Compact compact.Settings
	// Images reports whether the model takes images in a prompt.
	Images bool
}

// Make makes a session's model from cfg (nil: none). calls and summaries are how many model
// calls and summary requests a scripted model already answered (a loaded session goes on
// from there). A configuration that cannot be used is an InvalidModel setup error naming
// src and the member at fault; a missing API key is an APIKeyMissing one when strict is set,
// else it is kept as the model's Problem, so that a session can still be made or loaded,
// and only its prompts fail. It reads pid login's credentials file when the key is missing
// from the environment.
func (k Kinds) Make(cfg *provider.Model, src setup.Source, calls, summaries int, strict bool) (*Model, error) {
	m := &Model{Config: cfg, Source: src, Compact: compact.Defaults()}
	if cfg == nil {
		return m, nil
	}
	var err error
	if m.Compact, err = compact.ParseSettings(cfg.Compaction); err != nil {
		return nil, k.invalid(src, "compaction", fmt.Sprint(err))
	}
	m.Name = cfg.Provider
	if cfg.ID != "" {
		m.Name += "/" + cfg.ID
	}
	m.Window = cfg.ContextWindow
	if m.Window <= 0 {
		m.Window = compact.ContextWindow(cfg.ID)
	}
	m.Images = cfg.TakesImages()
	if err := cfg.Check(); err != nil {
		var fe *provider.FieldError
		errors.As(err, &fe)
		return nil, k.invalid(src, fe.Field, fe.Msg)
	}
	if m.Provider, m.Summarizer, err = cfg.Open(calls, summaries); err == nil {
		return m, nil
	}
	// The provider names the key's variable in its error when that is what is missing.
	if cfg.KeyMissing(err) {
		_, fileErr := credentials.Current()
		problem := setup.KeyMissing(src, m.Name, cfg.KeyVariable(), cfg.APIKeyEnv != "", fileErr, k.Failed)
		if strict {
			return nil, problem
		}
		m.Provider, m.Summarizer, m.Problem = nil, nil, problem
		return m, nil
	}
	return nil, k.invalid(src, "", fmt.Sprint(err))
}

// Decode reads a model configuration given as JSON (from src); a value that does not fit is
// an InvalidModel setup error naming the member.
func (k Kinds) Decode(raw json.RawMessage, src setup.Source) (*provider.Model, error) {
	cfg, err := provider.DecodeModel(raw)
	if fe, ok := err.(*provider.FieldError); ok {
		return nil, k.invalid(src, fe.Field, fe.Msg)
	}
	return cfg, err
}

// WithThinking returns m with thinking level level ("off" drops the setting), the model
// otherwise the same: a scripted model goes on with its next turn (it does not think), any
// other is made again. It fails with an InvalidModel setup error naming "thinking" for a
// level that is not "off", "low", "medium" or "high", with noModel's error when m has no
// configuration, or as Make does when strict (its key's variable unset).
func (k Kinds) WithThinking(m *Model, level string, noModel func() error) (*Model, error) {
	if err := provider.CheckThinking(level); err != nil {
		return nil, k.invalid(setup.Source{}, "thinking", fmt.Sprint(err))
	}
	if m.Config == nil {
		return nil, noModel()
	}
	cfg := *m.Config
	cfg.Thinking = level
	if level == "off" {
		cfg.Thinking = ""
	}
	if cfg.Provider == provider.Script {
		same := *m
		same.Config = &cfg
		return &same, nil
	}
	return k.Make(&cfg, setup.Source{}, 0, 0, true)
}

// Thinking returns m's thinking level: "off", "low", "medium" or "high" ("off" when the
// model names none, or there is no model).
func (m *Model) Thinking() string {
	if m.Config != nil && m.Config.Thinking != "" {
		return m.Config.Thinking
	}
	return "off"
}

// Price returns m's price; nil when it has none (or there is no model).
func (m *Model) Price() *provider.Price {
	if m.Config == nil {
		return nil
	}
	return m.Config.Price
}

// invalid is the setup error of a configuration from src that cannot be used: field is the
// member at fault ("" for none), why says what is wrong.
func (k Kinds) invalid(src setup.Source, field, why string) error {
	return setup.InvalidModelError(src, field, why, k.Invalid)
}
