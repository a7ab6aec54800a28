// Resume that hits the prompt cache over ACP (issue 24): after session/load in another
// connection (another pid, for the session folder), the first model request is the one the
// same conversation makes without the reload, byte for byte: system prompt (with the
// instruction files), tools and messages. Two conversations run the same answers against
// two recording servers.

package acp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// scriptedServer is a chat-completions server answering request n with answers[n] (an
// event stream's data lines) and recording every body.
type scriptedServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newScriptedServer(t *testing.T, answers ...[]string) *scriptedServer {
	s := &scriptedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, b)
		s.mu.Unlock()
		if n >= len(answers) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"unexpected request #%d"}}`, n+1)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, data := range answers[n] {
			fmt.Fprintf(w, "data: %s\n\n", data)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// resumeAnswers are one conversation's answers: prompt A reads a file (its arguments in
// two fragments, after some text), then answers; prompt B answers at once.
func resumeAnswers() [][]string {
	chunk := func(delta, finish string) string {
		return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
	}
	return [][]string{
		{chunk(`{"role":"assistant","content":"Let me look."}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":" \"a.txt\"}"}}]}`, "null"),
			chunk(`{}`, `"tool_calls"`)},
		{chunk(`{"role":"assistant","content":"It says alpha, é <&>."}`, `"stop"`)},
		{chunk(`{"role":"assistant","content":"B's answer."}`, `"stop"`)},
	}
}

func TestLoadSendsTheSameRequest(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("ACP-AGENTS: run the tests.\n"), 0o644)
	userSettings(t, `{"trustedFolders":[`+fmt.Sprintf("%q", dir)+`]}`)
	direct, reloaded := newScriptedServer(t, resumeAnswers()...), newScriptedServer(t, resumeAnswers()...)
	cfg := func(s *scriptedServer) string {
		return fmt.Sprintf(`{"model":{"provider":"openai","id":"m","baseUrl":%q},"appendSystemPrompt":"Be brief."}`, s.URL+"/v1")
	}
	prompt := func(c *client, sid, text string) {
		t.Helper()
		res, _ := c.result(c.prompt(sid, text), nil)
		if got := res.Get("stopReason").String(); got != "end_turn" {
			t.Fatalf("prompt %q: %s", text, res.Raw)
		}
	}

	// Without a reload: A, then B.
	a := start(t)
	a.initialize(nil)
	s1 := a.newSession(dir, cfg(direct))
	prompt(a, s1, "prompt A: what is in a.txt?")
	prompt(a, s1, "prompt B: thanks")
	a.stop()

	// With one: A, the connection ends, another loads the session, then B.
	b := start(t)
	b.initialize(nil)
	s2 := b.newSession(dir, cfg(reloaded))
	prompt(b, s2, "prompt A: what is in a.txt?")
	b.stop()
	c := start(t)
	c.initialize(nil)
	c.result(c.request("session/load", loadParams(s2, dir)), nil)
	prompt(c, s2, "prompt B: thanks")

	x, y := direct.requests(), reloaded.requests()
	if len(x) != 3 || len(y) != 3 {
		t.Fatalf("%d and %d requests, want 3 each", len(x), len(y))
	}
	for i := range 2 {
		if string(x[i]) != string(y[i]) {
			t.Fatalf("request %d of prompt A differs between the two connections (the test is wrong): %s", i+1, diffAt(x[i], y[i]))
		}
	}
	if string(x[2]) != string(y[2]) {
		t.Errorf("prompt B's request after session/load is not the one without the reload: %s", diffAt(x[2], y[2]))
	}
	if !strings.Contains(string(y[2]), "ACP-AGENTS: run the tests.") {
		t.Errorf("the trusted cwd's AGENTS.md is not in the request: %s", y[2])
	}
}

// diffAt describes where two byte strings first differ.
func diffAt(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-120)
	return fmt.Sprintf("at byte %d:\n  without reload: …%s…\n  after reload:   …%s…", i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
}
