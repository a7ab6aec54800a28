// This file tests the setup errors: what each says and carries, that errors.Is finds the
// layer's error each stands for, and the folder test the untrusted case relies on.

package setup

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

var errKind = errors.New("the layer's error")

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      error
		reason   Reason
		data     map[string]string
		contains []string
	}{
		{"no model", NoModelError("/u/settings.json", errKind), NoModel,
			map[string]string{"reason": "noModel", "setting": "model", "file": "/u/settings.json"},
			[]string{`set "model" in /u/settings.json`, modelExample}},
		{"untrusted", Untrusted("/ws", "/ws/.pid/settings.json", "/u/settings.json", errKind), UntrustedSetting,
			map[string]string{"reason": "untrustedSetting", "setting": "model", "folder": "/ws", "file": "/ws/.pid/settings.json"},
			[]string{"the workspace folder /ws sets \"model\" in /ws/.pid/settings.json", "not trusted", "user settings /u/settings.json"}},
		{"invalid from a file", InvalidModelError(Source{File: "/u/settings.json"}, "provider", "unknown provider \"x\"", errKind), InvalidModel,
			map[string]string{"reason": "invalidModel", "setting": "model", "field": "provider", "file": "/u/settings.json"},
			[]string{`"model" in /u/settings.json: unknown provider "x"`}},
		{"invalid from a saved session", InvalidModelError(Source{Saved: true}, "", "bad", errKind), InvalidModel,
			map[string]string{"reason": "invalidModel", "setting": "model"},
			[]string{"the model this session was saved with: bad"}},
		{"key named by apiKeyEnv", KeyMissing(Source{}, "openai/gpt", "MY_KEY", true, nil, errKind), APIKeyMissing,
			map[string]string{"reason": "apiKeyMissing", "setting": "model", "field": "apiKeyEnv", "variable": "MY_KEY"},
			[]string{`The model openai/gpt (the model your editor gave pid) reads its API key from MY_KEY, as its "apiKeyEnv" says`, "export MY_KEY=..."}},
		{"default key, unreadable credentials", KeyMissing(Source{}, "anthropic/s", "ANTHROPIC_API_KEY", false, errors.New("permission denied"), errKind), APIKeyMissing,
			map[string]string{"reason": "apiKeyMissing", "setting": "model", "field": "apiKeyEnv", "variable": "ANTHROPIC_API_KEY"},
			[]string{"run pid login", "(pid login's credentials file was not read: permission denied)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var se *Error
			if !errors.As(c.err, &se) || se.Reason != c.reason || !Is(fmt.Errorf("wrapped: %w", c.err)) {
				t.Fatalf("%v is not an Error of reason %s", c.err, c.reason)
			}
			if !errors.Is(c.err, errKind) {
				t.Error("errors.Is does not find the layer's error")
			}
			if !maps.Equal(se.Data(), c.data) {
				t.Errorf("Data = %v, want %v", se.Data(), c.data)
			}
			for _, want := range c.contains {
				if !strings.Contains(c.err.Error(), want) {
					t.Errorf("the message lacks %q:\n%s", want, c.err)
				}
			}
		})
	}
	if Is(errKind) {
		t.Error("Is reports a plain error as a setup error")
	}
}
