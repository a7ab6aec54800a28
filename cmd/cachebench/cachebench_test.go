package main

// The scripted session against the real pid binary (issue 32): every request the cache should
// serve whole is served whole, for each provider configuration: within a run, after a denial,
// after a subagent, and after a restart with session/load (with Anthropic thinking on, the
// loaded session used to send its thinking back as text: 0.69 of the request was served);
// only the first request after a compaction, after a tool_search activation, and (until the
// tool list is the same in every mode) after the plan -> acceptEdits switch may be less.
// OpenAI requests carry the session's id as prompt_cache_key, the same after the restart.

import (
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/pidtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCacheShares(t *testing.T) {
	dir := t.TempDir()
	bin, err := pidtest.Binary(dir, pidtest.Race())
	if err != nil {
		t.Fatal(err)
	}
	mcpBin, err := pidtest.Build(dir, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp", false)
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled pid would otherwise sleep a second when it exits.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	allowed := map[string]bool{noteCompacted: true, noteToolFound: true}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			out, err := runScript(bin, mcpBin, t.TempDir(), v)
			if err != nil {
				t.Fatal(err)
			}
			ms := measure(out.requests)
			for _, m := range ms {
				switch {
				case m.first:
				case allowed[m.note]:
					t.Logf("request %d (%s): hit share %.2f", m.n, m.note, m.hitShare())
				case m.hit != m.breakpoint:
					t.Errorf("request %d (%s %s): the cache serves %d of %d bytes (%.2f), want all: %s", m.n, m.conv, m.note, m.hit, m.breakpoint, m.hitShare(), firstDifference(out, m.n))
				}
			}
			if v.provider != "openai" {
				return
			}
			child := ""
			for i, r := range out.requests {
				key := gjson.GetBytes(r.body, "prompt_cache_key").String()
				switch steps[i].conv {
				case convMain:
					if key != out.sessionID {
						t.Errorf("request %d: prompt_cache_key %q, want the session's id %q", i+1, key, out.sessionID)
					}
				case convChild:
					if key == "" || key == out.sessionID || child != "" && key != child {
						t.Errorf("request %d (the subagent's): prompt_cache_key %q, want its own session's id", i+1, key)
					}
					child = key
				}
			}
		})
	}
}

// firstDifference shows where request n first differs from the one before it in its
// conversation.
func firstDifference(out *outcome, n int) string {
	conv := steps[n-1].conv
	prev := -1
	for i := n - 2; i >= 0; i-- {
		if steps[i].conv == conv {
			prev = i
			break
		}
	}
	if prev < 0 {
		return ""
	}
	a := cacheLayout(out.requests[prev].path, out.requests[prev].body).bytes
	b := cacheLayout(out.requests[n-1].path, out.requests[n-1].body).bytes
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-100)
	return "\n  before: …" + string(a[from:min(len(a), i+150)]) + "…\n  now:    …" + string(b[from:min(len(b), i+150)]) + "…"
}
