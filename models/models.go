// Package models reads the settings' "models" lists: the models a person may pick from
// (models/list), and what such an entry adds to a model a session names by provider and id
// alone. Its entry point is Parse, which turns the lists into Listed entries; ListOf makes
// models/list's answer of them, and Fill completes a model from them. It reads no file (the
// lists are the settings loader's) and knows no session.
package models

import (
	"encoding/json"
	"fmt"

	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/settings"
)

// Listed is one entry of the settings' "models" lists.
type Listed struct {
	// Config is the entry as a model configuration.
	Config provider.Model
	// raw is the entry's members, for Fill.
	raw map[string]json.RawMessage
}

// Parse returns the entries of lists (the user's first), each provider and id once (the
// first wins). A list that is not a list, or an entry that is not an object with a provider
// and an id, is left out and reported (report gets the settings file, the list's content and
// the message; it may be called several times for one list, and must not block).
func Parse(lists []settings.ModelList, report func(file string, content json.RawMessage, msg string)) []Listed {
	var out []Listed
	seen := map[[2]string]bool{}
	for _, list := range lists {
		var entries []json.RawMessage
		if err := json.Unmarshal(list.Models, &entries); err != nil {
			report(list.File, list.Models, fmt.Sprintf(`settings: %s: "models" must be a list of models such as {"provider": "anthropic", "id": "claude-sonnet-4-5", "name": "Sonnet 4.5"}; it is ignored`, list.File))
			continue
		}
		for i, e := range entries {
			var l Listed
			if json.Unmarshal(e, &l.raw) != nil || json.Unmarshal(e, &l.Config) != nil || l.Config.Provider == "" || l.Config.ID == "" {
				report(list.File, list.Models, fmt.Sprintf(`settings: %s: "models" entry %d needs at least "provider" and "id", e.g. {"provider": "anthropic", "id": "claude-sonnet-4-5"}; it is left out`, list.File, i+1))
				continue
			}
			key := [2]string{l.Config.Provider, l.Config.ID}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, l)
		}
	}
	return out
}

// Fill returns m completed from the entry of listed with the same provider and id, when
// there is one: the entry's members, then m's own over them. m itself is not modified;
// without a matching entry (or without an id) m is returned.
func Fill(listed []Listed, m *provider.Model) *provider.Model {
	if m == nil || m.ID == "" {
		return m
	}
	for _, l := range listed {
		if l.Config.Provider == m.Provider && l.Config.ID == m.ID {
			return m.Over(l.raw)
		}
	}
	return m
}

// Info is a model as models/list shows it: never more than these (no base URL, no key
// variable).
type Info struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
}

// List is models/list's answer.
type List struct {
	// Models are the settings' "models" entries: the user's, then the trusted workspace
	// folder's, each provider and id once.
	Models []Info `json:"models"`
	// Current is the session's model, or the model a new session would get; nil when there
	// is none.
	Current *Info `json:"current,omitempty"`
}

// ListOf returns models/list's answer: the entries of listed, and cur (nil: none), with the
// name its entry gives it when that entry has one.
func ListOf(listed []Listed, cur *provider.Model) List {
	out := List{Models: []Info{}}
	for _, l := range listed {
		out.Models = append(out.Models, Info{Provider: l.Config.Provider, ID: l.Config.ID, Name: l.Config.Name})
	}
	if cur != nil {
		info := Info{Provider: cur.Provider, ID: cur.ID, Name: cur.Name}
		for _, l := range listed {
			if l.Config.Provider == cur.Provider && l.Config.ID == cur.ID && l.Config.Name != "" {
				info.Name = l.Config.Name
				break
			}
		}
		out.Current = &info
	}
	return out
}
