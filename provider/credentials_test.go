package provider_test

// The keys pid login saves (package credentials): a provider uses one when the environment
// has none, the environment wins when set, and a key goes to the origin it was saved for
// only.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/provider/internal/replay"
)

// saveKeys writes a credentials file in the test's config folder (clearEnv's).
func saveKeys(t *testing.T, entries map[string]credentials.Entry) {
	t.Helper()
	path, err := credentials.DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := credentials.Save(path, &credentials.File{Credentials: entries}); err != nil {
		t.Fatal(err)
	}
}

func TestSavedKeyWhenTheEnvironmentHasNone(t *testing.T) {
	const fileKey, envKey = "file-key-Lr5Wq8Zt2Xn7Pk4", "env-key-Hb3Jd6Fs9Mv1Cy8"
	for _, tc := range []struct {
		provider, env, header, prefix, sse string
	}{
		{provider.Anthropic, provider.EnvAnthropicKey, "x-api-key", "", "anthropic"},
		{provider.OpenAI, provider.EnvOpenAIKey, "Authorization", "Bearer ", "openai"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			clearEnv(t)
			closeIdle(t)
			srv := replay.New(t, replay.Step{File: filepath.Join("testdata", tc.sse, "text.sse")})
			saveKeys(t, map[string]credentials.Entry{tc.provider: {Provider: tc.provider, BaseURL: srv.URL + "/v1", APIKey: fileKey}})
			cfg := provider.Config{Provider: tc.provider, ID: "m", BaseURL: srv.URL}
			p, err := provider.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r := stream(t, p, srv); r.Header.Get(tc.header) != tc.prefix+fileKey {
				t.Errorf("%s = %q, want the saved key", tc.header, r.Header.Get(tc.header))
			}
			if from, err := provider.KeySource(cfg); err != nil || !strings.Contains(from, "credentials") || strings.Contains(from, fileKey) {
				t.Errorf("KeySource = %q, %v; want the credentials entry, without the key", from, err)
			}
			// The environment wins when set, over a key saved for the same server.
			srv2 := replay.New(t, replay.Step{File: filepath.Join("testdata", tc.sse, "text.sse")})
			saveKeys(t, map[string]credentials.Entry{tc.provider: {Provider: tc.provider, BaseURL: srv2.URL, APIKey: fileKey}})
			cfg.BaseURL = srv2.URL
			t.Setenv(tc.env, envKey)
			p, err = provider.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r := stream(t, p, srv2); r.Header.Get(tc.header) != tc.prefix+envKey {
				t.Errorf("with %s set: %s = %q, want the environment's key", tc.env, tc.header, r.Header.Get(tc.header))
			}
		})
	}
}

// A key saved for one server is not sent to another: a settings file that points the model
// elsewhere gets no key from the file.
func TestSavedKeyStaysWithItsOrigin(t *testing.T) {
	clearEnv(t)
	saveKeys(t, map[string]credentials.Entry{"anthropic": {Provider: "anthropic", BaseURL: "https://api.anthropic.com", APIKey: "file-key-Lr5Wq8Zt2Xn7Pk4"}})
	_, err := provider.New(provider.Config{Provider: "anthropic", ID: "m", BaseURL: "http://127.0.0.1:9/v1"})
	if err == nil || !strings.Contains(err.Error(), "no Anthropic API key") || !strings.Contains(err.Error(), "pid login") {
		t.Errorf("New for another origin: %v, want no key (and pid login named)", err)
	}
	if _, err := provider.New(provider.Config{Provider: "anthropic", ID: "m"}); err != nil {
		t.Errorf("New for the saved origin: %v", err)
	}
}

// A credentials file others may read is not used, and the error says why.
func TestSavedKeyOfAnOpenFileIsRefused(t *testing.T) {
	clearEnv(t)
	saveKeys(t, map[string]credentials.Entry{"anthropic": {Provider: "anthropic", BaseURL: "https://api.anthropic.com", APIKey: "file-key-Lr5Wq8Zt2Xn7Pk4"}})
	path, _ := credentials.DefaultPath()
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := provider.New(provider.Config{Provider: "anthropic", ID: "m"})
	if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "file-key") {
		t.Errorf("New with a group-readable file: %v, want it refused naming chmod 600, without the key", err)
	}
}
