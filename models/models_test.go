// This file tests the reading of the settings' "models" lists: what is kept, what is left
// out and reported, how an entry completes a model, and models/list's answer.

package models

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/settings"
)

// reports collects what Parse reports.
type reports []string

func (r *reports) add(file string, _ json.RawMessage, msg string) {
	*r = append(*r, file+": "+msg)
}

func lists() []settings.ModelList {
	return []settings.ModelList{
		{File: "/home/u/settings.json", Models: json.RawMessage(`[
			{"provider": "anthropic", "id": "sonnet", "name": "Sonnet", "contextWindow": 200000, "apiKeyEnv": "MY_KEY"},
			{"provider": "openai"},
			"text",
			{"provider": "ollama", "id": "qwen", "baseUrl": "http://localhost:11434/v1"}]`)},
		{File: "/ws/.pid/settings.json", Models: json.RawMessage(`[
			{"provider": "anthropic", "id": "sonnet", "name": "Workspace's"},
			{"provider": "openai", "id": "gpt", "name": "GPT"}]`)},
		{File: "/ws2/.pid/settings.json", Models: json.RawMessage(`{"provider": "openai"}`)},
	}
}

// Every entry with a provider and an id is kept once, the user's first; the others, and a
// "models" that is not a list, are reported with their file and place.
func TestParse(t *testing.T) {
	var r reports
	got := Parse(lists(), r.add)
	var keys []string
	for _, l := range got {
		keys = append(keys, l.Config.Provider+"/"+l.Config.ID+"="+l.Config.Name)
	}
	if !slices.Equal(keys, []string{"anthropic/sonnet=Sonnet", "ollama/qwen=", "openai/gpt=GPT"}) {
		t.Fatalf("kept %v", keys)
	}
	if len(r) != 3 || !strings.Contains(r[0], `/home/u/settings.json: settings: /home/u/settings.json: "models" entry 2 needs at least "provider" and "id"`) ||
		!strings.Contains(r[1], "entry 3") || !strings.Contains(r[2], `/ws2/.pid/settings.json: "models" must be a list`) {
		t.Fatalf("reports:\n%s", strings.Join(r, "\n"))
	}
}

// Fill completes a model named by provider and id with its entry's members, its own over
// them; a model without entry, without id or nil comes back as it is.
func TestFill(t *testing.T) {
	var r reports
	listed := Parse(lists(), r.add)
	m := &provider.Model{Provider: "anthropic", ID: "sonnet", Name: "Mine"}
	got := Fill(listed, m)
	if got.ContextWindow != 200000 || got.APIKeyEnv != "MY_KEY" || got.Name != "Mine" {
		t.Fatalf("filled %+v, want the entry's window and key variable, its own name", got)
	}
	if m.ContextWindow != 0 {
		t.Fatal("Fill modified its model")
	}
	other := &provider.Model{Provider: "openai", ID: "unknown"}
	if Fill(listed, other) != other || Fill(listed, nil) != nil {
		t.Fatal("a model without entry was not returned as it is")
	}
	noID := &provider.Model{Provider: "anthropic"}
	if Fill(listed, noID) != noID {
		t.Fatal("a model without id was filled")
	}
}

// models/list lists the entries, and the current model with its entry's name.
func TestListOf(t *testing.T) {
	var r reports
	listed := Parse(lists(), r.add)
	got := ListOf(listed, &provider.Model{Provider: "openai", ID: "gpt"})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"models":[{"provider":"anthropic","id":"sonnet","name":"Sonnet"},{"provider":"ollama","id":"qwen"},{"provider":"openai","id":"gpt","name":"GPT"}],"current":{"provider":"openai","id":"gpt","name":"GPT"}}`
	if string(b) != want {
		t.Fatalf("models/list:\n%s\nwant:\n%s", b, want)
	}
	if none := ListOf(nil, nil); none.Models == nil || none.Current != nil {
		t.Fatalf("no lists, no model: %+v", none)
	}
}
