// This file tests pid login's key through the real binary: a prompt of a session whose model
// has no key is answered apiKeyMissing; once pid login's credentials file holds a key for
// the model's server (saved while pid runs), the next prompt uses it, and the key shows in
// no frame and no log line.

package rpc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/credentials"
)

func TestE2EKeySavedWhilePidRuns(t *testing.T) {
	t.Parallel()
	srv := newFakeOpenAI(t, sseAnswer(
		sseChunk(obj{"role": "assistant", "content": "Logged in."}, nil),
		sseChunk(obj{}, "stop"),
		sseUsage(10, 0, 3),
		sseDone,
	))
	root := t.TempDir()
	config := filepath.Join(root, "config")
	stderr := &syncBuffer{}
	d := startProcess(t, processOptions{Stderr: stderr, Env: []string{"XDG_CONFIG_HOME=" + config,
		"XDG_STATE_HOME=" + filepath.Join(root, "state"), "OPENAI_API_KEY=", "OPENAI_BASE_URL="}})
	d.initialize(nil)
	// OpenAI's own API needs a key; the base URL is the fake server's, as OPENAI_BASE_URL
	// would give it.
	model := obj{"provider": "openai", "id": "test-model", "baseUrl": srv.URL + "/v1", "apiKeyEnv": "PID_LOGIN_TEST_UNSET"}
	sid := d.newSession(obj{"model": model})
	code, msg := d.callErr("session/prompt", obj{"sessionId": sid, "text": "hello"})
	if code != -32803 || !strings.Contains(msg, "PID_LOGIN_TEST_UNSET") {
		t.Fatalf("a prompt without a key: %d %q, want -32803 apiKeyMissing", code, msg)
	}
	f := &credentials.File{Credentials: map[string]credentials.Entry{
		"127.0.0.1": {Provider: "openai", BaseURL: srv.URL + "/v1", APIKey: e2eKey}}}
	if _, err := credentials.Save(filepath.Join(config, "pid", credentials.FileName), f); err != nil {
		t.Fatal(err)
	}
	res := d.call("session/prompt", obj{"sessionId": sid, "text": "hello"})
	if got := res.Get("stopReason").String(); got != "stop" {
		t.Fatalf("the prompt after pid login: stopReason %q: %s", got, res.Raw)
	}
	reqs := srv.requests()
	if len(reqs) != 1 || reqs[0].auth != "Bearer "+e2eKey {
		t.Errorf("the server got %d requests, Authorization %q; want one with the saved key", len(reqs), firstAuth(reqs))
	}
	stopDaemon(t, d)
	checkNoKey(t, d, stderr)
}

func firstAuth(reqs []fakeRequest) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].auth
}
