package wire_test

import (
	"strings"
	"testing"

	"github.com/pid-agent/pid/provider/internal/wire"
)

func TestRedact(t *testing.T) {
	const key = "sk-proj-Zq8XwT2mVn4Lp0Rs7Ku1"
	for _, tc := range []struct{ in, want string }{
		{"no key here", "no key here"},
		{"Incorrect API key provided: " + key + ".", "Incorrect API key provided: [redacted]."},
		{key + key, "[redacted]"},
		// OpenAI masks keys like this: the fragments of 8 or more characters go.
		{"key sk-proj-Zq8X**********Lp0Rs7Ku1 rejected", "key [redacted]**********[redacted] rejected"},
		{"short fragments stay: sk-p Ku1", "short fragments stay: sk-p Ku1"},
		{"", ""},
	} {
		if got := wire.Redact(tc.in, key); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := wire.Redact("abc", ""); got != "abc" {
		t.Errorf("empty key changed the text: %q", got)
	}
	if got := wire.Redact("x=short!", "short"); got != "x=[redacted]!" {
		t.Errorf("short key: %q", got)
	}
	if got := wire.Redact("unicode é "+key, key); strings.Contains(got, "Zq8X") || !strings.HasPrefix(got, "unicode é ") {
		t.Errorf("unicode text: %q", got)
	}
}
