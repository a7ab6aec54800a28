package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// The servers of a session: the user's, a trusted workspace's, the session's own over them;
// an untrusted workspace's listed by name but run only when another source names them; a
// stdio server runs in the session's folder unless it names its own; a bad settings file is
// an error of its own, the session's a failure.
func TestConfigs(t *testing.T) {
	user := json.RawMessage(`{"shared":{"command":"/u"},"mine":{"command":"/m","cwd":"/elsewhere"}}`)
	ws := json.RawMessage(`{"shared":{"command":"/ws"},"shipped":{"command":"/s"}}`)
	own := json.RawMessage(`{"web":{"url":"https://x/mcp"}}`)
	servers, untrusted, errs, err := Configs("/w", user, ws, false, own)
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	if servers["shared"].Command != "/u" || servers["shared"].Cwd != "/w" || servers["mine"].Cwd != "/elsewhere" || servers["web"].Cwd != "" || len(servers) != 3 {
		t.Errorf("servers %+v", servers)
	}
	if strings.Join(untrusted, ",") != "shipped" {
		t.Errorf("untrusted %v", untrusted)
	}
	servers, untrusted, _, _ = Configs("/w", user, ws, true, nil)
	if servers["shared"].Command != "/ws" || servers["shipped"].Command != "/s" || len(untrusted) != 0 {
		t.Errorf("trusted: %+v %v", servers, untrusted)
	}
	_, _, errs, err = Configs("/w", json.RawMessage(`{"x":{}}`), nil, false, nil)
	if err != nil || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "user settings: ") {
		t.Errorf("a bad user file: %v %v", errs, err)
	}
	if _, _, _, err := Configs("/w", nil, nil, false, json.RawMessage(`{"x":{}}`)); err == nil || !strings.HasPrefix(err.Error(), "mcpServers: ") {
		t.Errorf("a bad own config: %v", err)
	}
}

// A session's file keeps no literal env value or header: env becomes a reference to pid's
// variable of that name, a literal header goes, references stay.
func TestWithoutSecrets(t *testing.T) {
	got := WithoutSecrets(json.RawMessage(`{"t":{"command":"x","env":{"TOKEN":"secret","REF":"${OTHER}"},"headers":{"Authorization":"Bearer k","X":"${H}"}}}`))
	if string(got) != `{"t":{"command":"x","env":{"REF":"${OTHER}","TOKEN":"${TOKEN}"},"headers":{"X":"${H}"}}}` {
		t.Errorf("kept %s", got)
	}
	if string(WithoutSecrets(json.RawMessage(`[1]`))) != `[1]` {
		t.Error("a value that is no object changed")
	}
}

// A session's prompt tells the model of tool_search when one of its MCP servers may have
// deferred tools, not when they are all eager.
func TestHasDeferred(t *testing.T) {
	if !HasDeferred(map[string]ServerConfig{"docs": {}, "git": {Load: LoadEager}}) {
		t.Error("a server without load: eager may have deferred tools")
	}
	if HasDeferred(map[string]ServerConfig{"git": {Load: LoadEager}}) || HasDeferred(nil) {
		t.Error("eager servers alone, or none, have no deferred tools")
	}
}
