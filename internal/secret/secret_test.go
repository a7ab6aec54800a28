package secret_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/secret"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Replace puts the caller's marker once per stretch of the secret, in any of its forms.
func TestReplace(t *testing.T) {
	k := secret.New("Zq8XwT2mVn4Lp0Rs7Ku1")
	in := "a Zq8XwT2mVn4Lp0Rs7Ku1 b " + base64.StdEncoding.EncodeToString([]byte("Zq8XwT2mVn4Lp0Rs7Ku1")) + " c"
	// The last group of the base64 ("dTE=", the key's last two bytes and padding) depends on
	// what follows the key in the encoded data, so it is not searched for.
	if got := k.Replace(in, "<S>"); got != "a <S> b <S>dTE= c" {
		t.Errorf("Replace = %q", got)
	}
	if got := secret.New("pw").Replace("pw, pwd and pw.", "<S>"); got != "<S>, pwd and <S>." {
		t.Errorf("short secret: %q", got)
	}
	if secret.New("pw").Active() || !k.Active() || (*secret.Secret)(nil).Active() {
		t.Error("Active")
	}
}

// A Stream of an inactive secret passes every piece on whole; an active one passes on the
// same text in the end, whatever the pieces.
func TestStream(t *testing.T) {
	text := "line one\nline two has Zq8XwT2mVn4Lp0Rs7Ku1 in it\n"
	for _, k := range []*secret.Secret{nil, secret.New("short"), secret.New("Zq8XwT2mVn4Lp0Rs7Ku1")} {
		r := secret.Stream{K: k, With: "<S>"}
		var out strings.Builder
		for i := 1; i <= len(text); i++ {
			piece := r.Next(text[:i], i == len(text))
			if !k.Active() && piece != text[i-1:i] {
				t.Fatalf("inactive secret held back: %q at %d", piece, i)
			}
			out.WriteString(piece)
		}
		if want := k.Replace(text, "<S>"); out.String() != want {
			t.Errorf("streamed %q, want %q", out.String(), want)
		}
	}
}
