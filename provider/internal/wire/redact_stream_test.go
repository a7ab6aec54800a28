package wire_test

// Tests of the key's redaction beyond its plain form (issue 19): its encodings, a key too
// short to search inside words, and a key the server streams back as text, whole or split
// across deltas.

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// encodings returns key in the forms a server or a tool could echo it: base64 (standard,
// URL-safe, padded or not) after 0, 1 and 2 other bytes, hex in both cases.
func encodings(key string) map[string]string {
	out := map[string]string{
		"hex":       hex.EncodeToString([]byte(key)),
		"HEX":       strings.ToUpper(hex.EncodeToString([]byte(key))),
		"percent":   strings.ReplaceAll(key, "/", "%2F"),
		"plain":     key,
		"base64 ws": base64.StdEncoding.EncodeToString([]byte(" " + key + "\n")),
	}
	for _, pre := range []string{"", "a", "ab"} {
		for name, enc := range map[string]*base64.Encoding{"std": base64.StdEncoding, "url": base64.URLEncoding, "raw": base64.RawStdEncoding} {
			out[name+" after "+pre] = enc.EncodeToString([]byte(pre + key))
		}
	}
	return out
}

// leaks reports the first run of 8 characters of key, or 12 of one of its encodings, that
// text holds; "" when none.
func leaks(text, key string) string {
	for name, form := range encodings(key) {
		n := 12
		if name == "plain" || name == "percent" {
			n = 8
		}
		// The edges of a base64 form depend on the bytes around the key.
		inner := form
		if strings.HasPrefix(name, "std") || strings.HasPrefix(name, "url") || strings.HasPrefix(name, "raw") || strings.HasPrefix(name, "base64") {
			inner = strings.TrimRight(form, "=")
			if len(inner) > 8 {
				inner = inner[4 : len(inner)-4]
			}
		}
		for i := 0; i+n <= len(inner); i++ {
			if strings.Contains(text, inner[i:i+n]) {
				return name + ": " + inner[i:i+n]
			}
		}
	}
	return ""
}

const streamKey = "sk-proj-Hq7/Tz3+Wm9Vx2Lp5Rk8Nb4Yc6Jd1"

func TestRedactEncodings(t *testing.T) {
	for name, form := range encodings(streamKey) {
		text := "echo: " + form + " done"
		got := wire.Redact(text, streamKey)
		if l := leaks(got, streamKey); l != "" || !strings.Contains(got, wire.Redacted) {
			t.Errorf("%s: Redact(%q) = %q leaks %q", name, text, got, l)
		}
		if !strings.HasPrefix(got, "echo: ") || !strings.HasSuffix(got, " done") {
			t.Errorf("%s: the words around the key changed: %q", name, got)
		}
	}
	// Text with no part of the key stays as it is, hex and base64 of other data too.
	for _, s := range []string{"maximum context length", hex.EncodeToString([]byte("hello world, this is fine")), base64.StdEncoding.EncodeToString([]byte("nothing secret in here at all"))} {
		if got := wire.Redact(s, streamKey); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}

// A key shorter than 8 characters ("x", "ollama": a local server's placeholder) is
// replaced only as a whole word: "maximum context length" was "ma[redacted]imum conte[redacted]t length".
func TestRedactShortKeyWholeWordsOnly(t *testing.T) {
	for _, tc := range []struct{ key, in, want string }{
		{"x", "This model's maximum context length is 8192 tokens", "This model's maximum context length is 8192 tokens"},
		{"ollama", "ollamas and xollama stay; the key ollama goes", "ollamas and xollama stay; the key [redacted] goes"},
		{"x", "Bearer x rejected", "Bearer [redacted] rejected"},
		{"short", "x=short!", "x=[redacted]!"},
		{"short", "shortly", "shortly"},
	} {
		if got := wire.Redact(tc.in, tc.key); got != tc.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", tc.in, tc.key, got, tc.want)
		}
	}
}

// streamThrough passes deltas through a Builder hiding key and returns the text deltas the
// sink saw, every text the sink saw (deltas and partial messages) and the final message.
func streamThrough(key string, deltas []string) (passed, seen []string, msg llm.Message) {
	b := wire.NewBuilder(func(m *llm.Message, ev llm.StreamEvent) {
		if ev.Kind == llm.StreamTextDelta {
			passed = append(passed, ev.Delta)
		}
		seen = append(seen, ev.Delta)
		for _, c := range m.Content {
			seen = append(seen, c.Text, c.Thinking)
		}
	})
	b.Hide(wire.NewSecret(key))
	b.Start()
	i := b.Open(llm.ContentText, "", "")
	for _, d := range deltas {
		b.Append(i, d)
	}
	return passed, seen, b.Done(llm.StopEnd)
}

// The key and each encoding, streamed back split at every byte: no delta, no partial
// message and not the final message holds a run of it; the text around it arrives whole.
func TestStreamedKeyIsRedactedAcrossDeltas(t *testing.T) {
	for name, form := range encodings(streamKey) {
		text := "Your key is " + form + ", keep it safe."
		for cut := 1; cut < len(text); cut++ {
			passed, seen, msg := streamThrough(streamKey, []string{text[:cut], text[cut:]})
			for _, s := range seen {
				if l := leaks(s, streamKey); l != "" {
					t.Fatalf("%s cut at %d: the sink saw %q (%s)", name, cut, s, l)
				}
			}
			var deltas strings.Builder
			for _, d := range passed {
				deltas.WriteString(d)
			}
			if l := leaks(msg.Text(), streamKey); l != "" || !strings.HasPrefix(msg.Text(), "Your key is ") || !strings.HasSuffix(msg.Text(), ", keep it safe.") {
				t.Fatalf("%s cut at %d: message %q (%s)", name, cut, msg.Text(), l)
			}
			if deltas.String() != msg.Text() {
				t.Fatalf("%s cut at %d: the deltas add up to %q, the message is %q", name, cut, deltas.String(), msg.Text())
			}
		}
		// One byte per delta.
		var bytes []string
		for i := range len(text) {
			bytes = append(bytes, text[i:i+1])
		}
		_, seen, msg := streamThrough(streamKey, bytes)
		for _, s := range append(seen, msg.Text()) {
			if l := leaks(s, streamKey); l != "" {
				t.Fatalf("%s byte by byte: %q leaks (%s)", name, s, l)
			}
		}
	}
}

// Text without the key streams with at most the few bytes that could begin it held back,
// and arrives whole at the block's end; a short key holds nothing back.
func TestStreamedTextWithoutKeyPassesOn(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	passed, _, msg := streamThrough(streamKey, []string{text[:400], text[400:]})
	if msg.Text() != text {
		t.Fatalf("message %q", msg.Text())
	}
	// The first delta is the first piece but for its last bytes (at most 15).
	if first := passed[0]; len(first) < 400-15 || !strings.HasPrefix(text, first) {
		t.Errorf("first delta %d bytes, want at least 385 of 400", len(first))
	}
	passed, _, _ = streamThrough("ollama", []string{"Run ollama", " pull"})
	if passed[0] != "Run ollama" {
		t.Errorf("a short key held back text or redacted a word: %q", passed[0])
	}
}

// Through Run, as a provider streams: a server that sends the key back in two deltas.
func TestRunRedactsKeyStreamedBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		half := len(runKey) / 2
		tr := replay.NewTransport(t, replay.Answer{Body: sse("Your key is "+runKey[:half], runKey[half:]+" indeed").Body})
		msg, rec, _ := fakeRun(t, tr, wire.Timeouts{})
		for _, s := range append(rec.Steps(), msg.Text()) {
			if strings.Contains(s, runKey[:8]) || strings.Contains(s, runKey[half:half+8]) || strings.Contains(s, runKey[len(runKey)-8:]) {
				t.Fatalf("the key reached the editor: %q", s)
			}
		}
		if msg.Text() != "Your key is [redacted] indeed" {
			t.Errorf("message %q", msg.Text())
		}
	})
}
