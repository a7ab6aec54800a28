// ACP authentication through the real binary (pid --acp over pipes): the terminal method for
// a client declaring auth.terminal, and auth_required (-32000) for session/new whose model
// has no key in pid's environment nor in pid login's credentials.

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pid-agent/pid/internal/pidtest"
)

func TestACPLoginAndAuthRequired(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	p, err := pidtest.Start(pidBin, pidtest.Options{Args: []string{"--acp"}, Home: filepath.Join(root, "home"),
		Env:  []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY="},
		Conn: pidtest.ConnOptions{Framing: pidtest.Lines, HangGuard: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("pid's stderr:\n%s", p.Stderr())
		}
	})
	key, err := p.RequestID("1", "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"auth": map[string]any{"terminal": true}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Response(key)
	if err != nil {
		t.Fatal(err)
	}
	methods := m.Get("result.authMethods")
	if got := methods.Raw; methods.Get("#").Int() != 1 || methods.Get("0.id").String() != "pid-login" ||
		methods.Get("0.type").String() != "terminal" || methods.Get("0.args").Raw != `["login"]` ||
		methods.Get("0.name").String() != "Log in to a model provider" {
		t.Errorf("authMethods %s", got)
	}
	key, err = p.RequestID("2", "session/new", map[string]any{"cwd": ws, "mcpServers": []any{},
		"_meta": map[string]any{"pid": map[string]any{"model": map[string]any{"provider": "anthropic", "id": "claude-sonnet-4-5"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err = p.Response(key); err != nil {
		t.Fatal(err)
	}
	if code := m.Get("error.code").Int(); code != -32000 || m.Get("error.data.reason").String() != "apiKeyMissing" {
		t.Errorf("session/new without a key: %s", m)
	}
}

// A client running the terminal method appends its args (login) to the agent's command
// line (pid --acp): that is pid login, in the terminal, saving the key.
func TestACPTerminalMethodRunsLogin(t *testing.T) {
	env, config := loginEnv(t)
	r := startPty(t, env, "--acp", "login")
	r.expect("Choose 1-3: ")
	r.typeIn("1\r")
	r.expect("it is not shown): ")
	r.typeIn(typedKey + "\r")
	r.expect("Choose 1-4 [1]: ")
	r.typeIn("1\r")
	if code := r.wait(); code != 0 {
		t.Fatalf("pid --acp login exited %d:\n%s", code, r.output())
	}
	if _, err := os.Stat(filepath.Join(config, "pid", "credentials.json")); err != nil {
		t.Errorf("pid --acp login saved no credentials: %v\n%s", err, r.output())
	}
}
