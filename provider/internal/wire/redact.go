// This file keeps API keys out of text: every error a provider returns passes through
// Redact, and the text and thinking a server streams back pass through a Secret as they
// arrive (see Builder).

package wire

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
)

// redactWindow is the shortest run of a key's characters that Redact removes. Servers echo
// keys whole or masked ("sk-abc…wxyz"); a window of 8 catches the whole key and any long
// fragment while leaving ordinary words alone (a key is random, a word is not). A key's
// encodings are matched by longer runs (base64Window, hexWindow), which stand for about as
// many bytes of the key.
const (
	redactWindow = 8
	base64Window = 12
	hexWindow    = 16
	// maxWindow is the longest run: a byte of streamed text may be passed on once this many
	// bytes minus one follow it.
	maxWindow = hexWindow
)

// Redacted is what replaces a key, or a fragment of one, in text.
const Redacted = "[redacted]"

// Secret is a key made ready to be found in text: the runs of its characters, and of its
// common encodings (base64 standard and URL-safe at the three alignments, hex in lower and
// upper case, percent-encoding), that Redact removes. A key shorter than 8 characters is
// no secret worth searching for inside words: it is matched only as a whole word, in
// Redact, and not at all in streamed text.
//
// A Secret is immutable and safe for concurrent use.
type Secret struct {
	key string
	// runs holds, by run length, the runs of the key and of its encodings; forms holds the
	// key and its encodings whole, with the run length each is matched by.
	runs  map[int]map[string]struct{}
	forms []form
}

// form is the key or one of its encodings, and the length of the runs matched in it.
type form struct {
	text string
	n    int
}

// NewSecret prepares key for Redact; an empty key redacts nothing.
func NewSecret(key string) *Secret {
	k := &Secret{key: key}
	if len(key) < redactWindow {
		return k
	}
	k.runs = map[int]map[string]struct{}{}
	add := func(text string, n int) {
		if k.runs[n] == nil {
			k.runs[n] = map[string]struct{}{}
		}
		for i := 0; i+n <= len(text); i++ {
			k.runs[n][text[i:i+n]] = struct{}{}
		}
		k.forms = append(k.forms, form{text, n})
	}
	add(key, redactWindow)
	for _, esc := range []string{url.QueryEscape(key), url.PathEscape(key)} {
		if esc != key {
			add(esc, redactWindow)
		}
	}
	h := hex.EncodeToString([]byte(key))
	add(h, hexWindow)
	add(strings.ToUpper(h), hexWindow)
	// The key's base64 depends on where it starts in the encoded data: it may share its
	// first group of four characters with 1 or 2 bytes before it, and its last with the
	// bytes after it. Only the groups made of the key's bytes alone are kept.
	for align := 0; align < 3; align++ {
		data := append(make([]byte, align), key...)
		enc := base64.RawStdEncoding.EncodeToString(data)
		start := 0
		if align > 0 {
			start = 4
		}
		end := 4 * (len(data) / 3)
		if end <= start {
			continue
		}
		inner := enc[start:end]
		add(inner, base64Window)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(inner), base64Window)
	}
	return k
}

// active reports whether the key is searched for in streamed text (8 characters or more).
func (k *Secret) active() bool { return k != nil && k.runs != nil }

// holdBack returns how many bytes at the end of text, as streamed so far, must wait for
// what follows before they can be passed on: the longest end of text that could be the
// start of a run of the key or of an encoding (shorter than that run), 0 when none could.
// Every byte before it is then redacted as it will stay, since no run that covers it can
// reach past the end of text.
func (k *Secret) holdBack(text string) int {
	for l := min(maxWindow-1, len(text)); l > 0; l-- {
		end := text[len(text)-l:]
		for _, f := range k.forms {
			if l < f.n && strings.Contains(f.text, end) {
				return l
			}
		}
	}
	return 0
}

// Redact returns s with the key, and every run of at least 8 characters that also occurs in
// it (or of its encodings, see Secret), replaced by "[redacted]". An empty key redacts
// nothing; one shorter than 8 characters is replaced only where it stands as a whole word
// (a key of "x" leaves "maximum" alone).
func Redact(s, key string) string { return NewSecret(key).Redact(s) }

// Redact is the package's Redact for k's key.
func (k *Secret) Redact(s string) string {
	if k == nil || k.key == "" || s == "" {
		return s
	}
	if k.runs == nil {
		return replaceWord(s, k.key)
	}
	out, _ := k.span(s, 0, len(s), false)
	return out
}

// span returns s[from:to] redacted, knowing all of s around it, and whether its last byte
// is part of a redacted run. inRun says whether the byte before from was (so a run that
// goes on is not marked twice). Bytes of s past to are only looked at.
func (k *Secret) span(s string, from, to int, inRun bool) (string, bool) {
	lo := max(0, from-(maxWindow-1))
	hi := min(len(s), to+maxWindow-1)
	hit := k.hits(s[lo:hi])
	if hit == nil {
		return s[from:to], false
	}
	var b strings.Builder
	for i := from; i < to; i++ {
		if !hit[i-lo] {
			b.WriteByte(s[i])
			inRun = false
			continue
		}
		if !inRun {
			b.WriteString(Redacted)
		}
		inRun = true
	}
	return b.String(), inRun
}

// hits returns, for each byte of s, whether it lies inside a run of the key or of one of
// its encodings; nil when none does.
func (k *Secret) hits(s string) []bool {
	var hit []bool
	for n, runs := range k.runs {
		for i := 0; i+n <= len(s); i++ {
			if _, ok := runs[s[i:i+n]]; ok {
				if hit == nil {
					hit = make([]bool, len(s))
				}
				for j := i; j < i+n; j++ {
					hit[j] = true
				}
			}
		}
	}
	return hit
}

// replaceWord replaces key in s where it stands as a whole word: not preceded nor
// followed by a letter, digit or underscore.
func replaceWord(s, key string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+len(key) <= len(s); {
		j := strings.Index(s[i:], key)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(key)
		if (at == 0 || !wordByte(s[at-1])) && (end == len(s) || !wordByte(s[end])) {
			b.WriteString(s[last:at])
			b.WriteString(Redacted)
			last, i = end, end
			continue
		}
		i = at + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordByte reports whether c is a letter, digit or underscore (ASCII), or a byte of a
// multi-byte character (a letter of another script, to be safe).
func wordByte(c byte) bool {
	return c == '_' || c >= 0x80 || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// streamRedactor redacts a text that arrives in pieces, passing each byte on once enough
// of the text after it is known (Secret.holdBack), so that a key split across pieces is
// caught as surely as a whole one.
type streamRedactor struct {
	k     *Secret
	done  int  // bytes of the text already passed on
	inRun bool // whether the last byte passed on was redacted
}

// next returns the redacted text that can be passed on now that the text so far is raw;
// flush passes on everything (at the block's end).
func (r *streamRedactor) next(raw string, flush bool) string {
	to := len(raw)
	if !flush {
		to -= r.k.holdBack(raw[max(r.done, len(raw)-(maxWindow-1)):])
	}
	if to <= r.done {
		return ""
	}
	out, inRun := r.k.span(raw, r.done, to, r.inRun)
	r.done, r.inRun = to, inRun
	return out
}
