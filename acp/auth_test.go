// Authentication: the method initialize offers (terminal when the client can run pid login
// in a terminal, agent otherwise), authenticate, and auth_required (-32000) for a session
// whose model has no usable key and for a prompt without a model.

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"
)

// noKeys makes an environment with no model key and no pid login credentials.
func noKeys(t *testing.T) (config string) {
	t.Helper()
	config = filepath.Join(t.TempDir(), "config")
	t.Setenv("XDG_CONFIG_HOME", config)
	for _, v := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	return config
}

func TestAuthMethods(t *testing.T) {
	terminal := `[{"id":"pid-login","name":"Log in to a model provider","type":"terminal","args":["login"]}]`
	agent := `[{"id":"pid-login","name":"Log in to a model provider","type":"agent"}]`
	for _, tc := range []struct {
		name string
		caps map[string]any
		want string
	}{
		{"auth.terminal", map[string]any{"auth": map[string]any{"terminal": true}}, terminal},
		{"_meta terminal-auth (the registry's validator)", map[string]any{"_meta": map[string]any{"terminal-auth": true}}, terminal},
		{"auth.terminal false", map[string]any{"auth": map[string]any{"terminal": false}}, agent},
		{"no capabilities", nil, agent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t)
			res := c.initialize(tc.caps)
			methods := res.Get("authMethods")
			if methods.Get("0.description").String() == "" || !strings.Contains(methods.Get("0.description").String(), "pid login") {
				t.Errorf("description does not say pid login: %s", methods.Raw)
			}
			var got []any
			if err := json.Unmarshal([]byte(methods.Raw), &got); err != nil {
				t.Fatal(err)
			}
			for _, m := range got {
				delete(m.(map[string]any), "description")
			}
			want := gjson.Parse(tc.want).Value()
			if d := cmp.Diff(want, any(got)); d != "" {
				t.Errorf("authMethods (-want +got):\n%s", d)
			}
		})
	}
}

func TestAuthRequiredWithoutKey(t *testing.T) {
	noKeys(t)
	c := start(t)
	c.initialize(map[string]any{"auth": map[string]any{"terminal": true}})
	p := map[string]any{"cwd": t.TempDir(), "mcpServers": []any{},
		"_meta": map[string]any{"pid": map[string]any{"model": map[string]any{"provider": "anthropic", "id": "claude-sonnet-4-5"}}}}
	m := c.wantError(c.request("session/new", p), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "ANTHROPIC_API_KEY") || !strings.Contains(m.Error.Message, "pid login") {
		t.Errorf("the message does not say what to do: %s", m.raw)
	}
	if got := m.get("error.data.reason").String(); got != "apiKeyMissing" {
		t.Errorf("data.reason %q: %s", got, m.raw)
	}
	// With the key in the environment the same request makes a session.
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
	res, _ := c.result(c.request("session/new", p), nil)
	if res.Get("sessionId").String() == "" {
		t.Errorf("no session with a key: %s", res.Raw)
	}
}

func TestPromptWithoutModelIsAuthRequired(t *testing.T) {
	noKeys(t)
	c := start(t)
	c.initialize(nil)
	sid := c.newSession(t.TempDir(), "")
	m := c.wantError(c.prompt(sid, "hi"), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "no model") || m.get("error.data.reason").String() != "noModel" {
		t.Errorf("prompt without a model: %s", m.raw)
	}
}

func TestAuthenticate(t *testing.T) {
	config := noKeys(t)
	c := start(t)
	c.initialize(nil)
	// No model in the user settings: authenticate says what to do.
	m := c.wantError(c.request("authenticate", map[string]any{"methodId": "pid-login"}), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "pid login") {
		t.Errorf("authenticate without a model: %s", m.raw)
	}
	c.wantError(c.request("authenticate", map[string]any{"methodId": "oauth"}), codeInvalidParams)
	// A model whose key is missing: still auth_required, naming the variable.
	os.MkdirAll(filepath.Join(config, "pid"), 0o700)
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"model":{"provider":"openai","id":"gpt-5"}}`)
	c2 := start(t)
	c2.initialize(nil)
	m = c2.wantError(c2.request("authenticate", map[string]any{"methodId": "pid-login"}), codeAuthRequired)
	if !strings.Contains(m.Error.Message, "OPENAI_API_KEY") {
		t.Errorf("authenticate with a keyless model: %s", m.raw)
	}
	// Once the key is there, authenticate succeeds.
	t.Setenv("OPENAI_API_KEY", "sk-test-not-used")
	if res, _ := c2.result(c2.request("authenticate", map[string]any{"methodId": "pid-login"}), nil); res.Raw != "{}" {
		t.Errorf("authenticate with a key: %s", res.Raw)
	}
}
