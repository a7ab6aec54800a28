package textcut_test

import (
	"testing"

	"github.com/pid-agent/pid/internal/textcut"
)

// A cut never splits a rune: it backs off to the rune's start.
func TestRunes(t *testing.T) {
	s := []byte("aé€b") // a(1) é(2) €(3) b(1)
	for _, c := range []struct {
		max  int
		want string
	}{
		{0, ""}, {1, "a"}, {2, "a"}, {3, "aé"}, {4, "aé"}, {5, "aé"}, {6, "aé€"}, {7, "aé€b"}, {100, "aé€b"},
	} {
		if got := string(textcut.Runes(s, c.max)); got != c.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", s, c.max, got, c.want)
		}
	}
}

// Invalid bytes become one replacement character per run; valid text is kept as it is.
func TestValid(t *testing.T) {
	if got := textcut.Valid([]byte("ok\xff\xfeé")); got != "ok\uFFFDé" {
		t.Errorf("Valid = %q", got)
	}
	if got := textcut.Valid([]byte("plain")); got != "plain" {
		t.Errorf("Valid = %q", got)
	}
}
