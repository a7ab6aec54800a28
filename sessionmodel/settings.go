// This file finds what the settings files say of a session's model: the model they name for
// a folder, their "models" lists (package models reads them), what an entry of those lists
// adds to a model named by provider and id, the model of a defined agent's child, and why a
// session has no model.

package sessionmodel

import (
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/models"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/setup"
)

// Settings are the settings files as a session's model sees them. It reads no file: the
// settings are the Loader's snapshot. Its methods are safe for concurrent use when Report
// and ReportOnce are.
type Settings struct {
	// Loader holds the settings files; nil when there are none (then nothing is named or
	// listed).
	Loader *settings.Loader
	// Kinds are the errors Make and Decode's setup errors stand for.
	Kinds
	// Report tells the client about a settings file's model that cannot be read (severe is
	// true). It must not block for long.
	Report func(msg string, severe bool)
	// ReportOnce reports a problem with a settings file's content (file, content, message),
	// once per daemon: models/list may be asked often. It must not block for long.
	ReportOnce func(file string, content json.RawMessage, msg string)
}

// Named returns the model the settings files name for a session in cwd, with the file it
// comes from: its workspace folder's own when that folder is trusted, else the user's; nil
// when none does, or the value is malformed (which is reported, as severe). It is read when
// a session starts, so a change applies to the next session.
func (st Settings) Named(cwd string) (*provider.Model, setup.Source) {
	if st.Loader == nil {
		return nil, setup.Source{}
	}
	raw, file := st.Loader.ModelSource(cwd)
	if raw == nil {
		return nil, setup.Source{}
	}
	src := setup.Source{File: file}
	m, err := st.Decode(raw, src)
	if err != nil {
		st.Report(fmt.Sprintf("settings: %v", err), true)
		return nil, setup.Source{}
	}
	return m, src
}

// Listed returns the "models" entries of the settings for cwd (models.Parse), the user's
// first, each provider and id once; a malformed entry is reported through ReportOnce.
func (st Settings) Listed(cwd string) []models.Listed {
	if st.Loader == nil {
		return nil
	}
	return models.Parse(st.Loader.Models(cwd), st.ReportOnce)
}

// Fill returns m completed from the settings' "models" entry for cwd with the same provider
// and id, when there is one: the entry's members, then m's own over them. m itself is not
// modified; without a matching entry (or an id) m is returned.
func (st Settings) Fill(cwd string, m *provider.Model) *provider.Model {
	if m == nil || m.ID == "" {
		return m
	}
	return models.Fill(st.Listed(cwd), m)
}

// Start makes the model a session in cwd starts with: own (its configuration's), else the
// settings'; one named by provider and id gets the rest from the settings' "models" list.
// A saved session's (saved set: a load or a fork) is as saved, going on after calls model
// calls and summaries summary requests. A missing key is the model's Problem, not an error.
func (st Settings) Start(cwd string, own *provider.Model, saved bool, calls, summaries int) (*Model, error) {
	src := setup.Source{Saved: saved}
	cfg := own
	if cfg == nil {
		cfg, src = st.Named(cwd)
	}
	if !saved {
		cfg = st.Fill(cwd, cfg)
	}
	return st.Make(cfg, src, calls, summaries, false)
}

// List returns models/list's answer for a session in cwd: the settings' "models" entries,
// and cur, its model (nil: none).
func (st Settings) List(cwd string, cur *provider.Model) models.List {
	return models.ListOf(st.Listed(cwd), cur)
}

// ListNew returns models/list's answer for a new session in cwd: the settings' "models"
// entries, and the model it would get: editor's (the editor's default), else the one the
// settings name.
func (st Settings) ListNew(cwd string, editor *provider.Model) models.List {
	if editor == nil {
		editor, _ = st.Named(cwd)
	}
	return st.List(cwd, editor)
}

// Pick makes the model raw describes (session/setModel's) for a session in cwd: one named
// by provider and id that is an entry of the settings' "models" list gets that entry's other
// members, raw's winning. It fails as Decode does, and as Make does when strict.
func (st Settings) Pick(cwd string, raw json.RawMessage) (*Model, error) {
	cfg, err := st.Decode(raw, setup.Source{})
	if err != nil {
		return nil, err
	}
	return st.Make(st.Fill(cwd, cfg), setup.Source{}, 0, 0, true)
}

// UserProblem returns why a session the user's settings alone configure could not call its
// model now, as a setup error: no model in the user settings (NoModel), a model that is
// not usable (InvalidModel), or one whose API key is neither in pid's environment nor saved
// by pid login (APIKeyMissing); nil when it could.
func (st Settings) UserProblem() error {
	m, src := st.Named("")
	if m == nil {
		return setup.NoModelError(setup.UserSettingsFile(), st.NoModel)
	}
	_, err := st.Make(st.Fill("", m), src, 0, 0, true)
	return err
}

// Missing is why a session in cwd, confined to roots, has no model: a workspace folder of
// its that sets one but is not trusted (an UntrustedSetting setup error), else no setting
// at all (NoModel).
func (st Settings) Missing(cwd string, roots []string) error {
	user := setup.UserSettingsFile()
	if st.Loader != nil {
		for _, root := range roots {
			if !mdfile.Within(cwd, root) || st.Loader.Trusted(root) {
				continue
			}
			for _, ignored := range st.Loader.Ignored(root) {
				if ignored == "model" {
					return setup.Untrusted(root, settings.WorkspacePath(root), user, st.NoModel)
				}
			}
		}
	}
	return setup.NoModelError(user, st.NoModel)
}

// ForAgent returns the model configuration of a defined agent's child in cwd, whose parent
// has model parent (nil: none) and may pick from list (models/list's): nil for the
// parent's (the agent's file names none, inherit, or a model not in the list: the warning
// then says so), else the agent's model completed from the settings' "models" list.
func (st Settings) ForAgent(cwd string, def *agents.Agent, parent *provider.Model, list models.List) (*provider.Model, string) {
	if parent == nil {
		return nil, ""
	}
	p := agents.Model{Provider: parent.Provider, ID: parent.ID}
	in := make([]agents.Model, len(list.Models))
	for i, m := range list.Models {
		in[i] = agents.Model{Provider: m.Provider, ID: m.ID, Name: m.Name}
	}
	m, warn := def.ResolveModel(in, p)
	if m == p {
		return nil, warn
	}
	return st.Fill(cwd, &provider.Model{Provider: m.Provider, ID: m.ID}), warn
}
