// Package secret finds a known secret (an API key, a token pid holds) in text: the secret
// itself, any run of 8 or more of its characters (servers echo keys masked, "sk-abc…wxyz"),
// and its common encodings (base64 standard and URL-safe at the three alignments, hex in
// lower and upper case, percent-encoding). It also redacts text that arrives in pieces, so
// that a secret split across two pieces is caught as surely as a whole one.
//
// The entry point is New. The provider package redacts its API key with it (error text,
// streamed text) and package redact the secrets of pid's environment (tool output).
package secret

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
)

// Run lengths: a run of a secret's characters shorter than MinLen is left alone (a secret
// is random, a word is not), and its encodings are matched by runs that stand for about as
// many bytes of it.
const (
	MinLen       = 8
	base64Window = 12
	hexWindow    = 16
	// maxWindow is the longest run: a byte of streamed text can always be passed on once
	// this many bytes minus one follow it.
	maxWindow = hexWindow
)

// Secret is a secret made ready to be found in text. A secret shorter than MinLen is no
// secret worth searching for inside words: Replace matches it only as a whole word, and
// Stream not at all.
//
// A Secret is immutable and safe for concurrent use.
type Secret struct {
	value string
	// runs holds, by run length, the runs of the secret and of its encodings; forms holds
	// the secret and its encodings whole, with the run length each is matched by.
	runs  map[int]map[string]struct{}
	forms []form
	// starts has a bit set for the hash of the first 4 bytes of every run (startHash): a
	// text position whose bit is clear starts no run, which spares the map lookups there.
	starts *[1 << 10]uint64
}

// startHash hashes the 4 bytes at the start of s (len(s) >= 4) to 16 bits.
func startHash(s string) uint32 {
	v := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	return (v * 2654435761) >> 16
}

// form is the secret or one of its encodings, and the length of the runs matched in it.
type form struct {
	text string
	n    int
}

// New prepares value to be found; an empty value finds nothing.
func New(value string) *Secret {
	k := &Secret{value: value}
	if len(value) < MinLen {
		return k
	}
	k.runs = map[int]map[string]struct{}{}
	k.starts = new([1 << 10]uint64)
	add := func(text string, n int) {
		if k.runs[n] == nil {
			k.runs[n] = map[string]struct{}{}
		}
		for i := 0; i+n <= len(text); i++ {
			k.runs[n][text[i:i+n]] = struct{}{}
			h := startHash(text[i:])
			k.starts[h>>6] |= 1 << (h & 63)
		}
		k.forms = append(k.forms, form{text, n})
	}
	add(value, MinLen)
	for _, esc := range []string{url.QueryEscape(value), url.PathEscape(value)} {
		if esc != value {
			add(esc, MinLen)
		}
	}
	h := hex.EncodeToString([]byte(value))
	add(h, hexWindow)
	add(strings.ToUpper(h), hexWindow)
	// The secret's base64 depends on where it starts in the encoded data: it may share its
	// first group of four characters with 1 or 2 bytes before it, and its last with the
	// bytes after it. Only the groups made of the secret's bytes alone are kept.
	for align := 0; align < 3; align++ {
		data := append(make([]byte, align), value...)
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

// Active reports whether the secret is searched for inside words and in streamed text
// (it has MinLen characters or more).
func (k *Secret) Active() bool { return k != nil && k.runs != nil }

// Replace returns s with every run of at least MinLen characters of the secret, or of an
// encoding (see the package comment), replaced by with, once per stretch of such runs. A
// secret shorter than MinLen is replaced only where it stands as a whole word (a secret of
// "x" leaves "maximum" alone); an empty one never.
func (k *Secret) Replace(s, with string) string {
	if k == nil || k.value == "" || s == "" {
		return s
	}
	if k.runs == nil {
		return replaceWord(s, k.value, with)
	}
	out, _ := k.span(s, 0, len(s), false, with)
	return out
}

// span returns s[from:to] with the secret replaced, knowing all of s around it, and whether
// its last byte is part of a replaced run. inRun says whether the byte before from was (so
// a run that goes on is not marked twice). Bytes of s past to are only looked at.
func (k *Secret) span(s string, from, to int, inRun bool, with string) (string, bool) {
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
			b.WriteString(with)
		}
		inRun = true
	}
	return b.String(), inRun
}

// hits returns, for each byte of s, whether it lies inside a run of the secret or of one
// of its encodings; nil when none does.
func (k *Secret) hits(s string) []bool {
	var hit []bool
	for i := 0; i+MinLen <= len(s); i++ {
		if h := startHash(s[i:]); k.starts[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for n, runs := range k.runs {
			if i+n > len(s) {
				continue
			}
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

// holdBack returns how many bytes at the end of text, as streamed so far, must wait for
// what follows before they can be passed on: the longest end of text that could be the
// start of a run of the secret or of an encoding (shorter than that run), 0 when none
// could. Every byte before it is then replaced as it will stay, since no run that covers
// it can reach past the end of text.
func (k *Secret) holdBack(text string) int {
	// An end that no form holds has no longer end that one holds (the longer one ends with
	// it), so the search goes up from one byte and stops at the first miss: most text
	// misses at once.
	held := 0
	for l := 1; l <= min(maxWindow-1, len(text)); l++ {
		end := text[len(text)-l:]
		if !slices.ContainsFunc(k.forms, func(f form) bool { return l < f.n && strings.Contains(f.text, end) }) {
			break
		}
		held = l
	}
	return held
}

// replaceWord replaces value in s where it stands as a whole word: not preceded nor
// followed by a letter, digit or underscore.
func replaceWord(s, value, with string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+len(value) <= len(s); {
		j := strings.Index(s[i:], value)
		if j < 0 {
			break
		}
		at, end := i+j, i+j+len(value)
		if (at == 0 || !wordByte(s[at-1])) && (end == len(s) || !wordByte(s[end])) {
			b.WriteString(s[last:at])
			b.WriteString(with)
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

// Stream replaces a secret in a text that arrives in pieces, passing each byte on once
// enough of the text after it is known, so that a secret split across pieces is caught as
// surely as a whole one. The zero Stream with K nil passes everything on at once.
type Stream struct {
	K    *Secret
	With string // what replaces the secret
	// Done counts the bytes of the text already passed on.
	Done  int
	inRun bool // whether the last byte passed on was replaced
}

// Next returns what can be passed on now that the text so far is text (the text given at
// the last call and more): all of it when flush is set (the text ends) or the secret is
// not Active, else all but the bytes that could still turn out to be part of the secret.
func (r *Stream) Next(text string, flush bool) string {
	to := len(text)
	if !r.K.Active() {
		out := text[r.Done:]
		r.Done = to
		return out
	}
	if !flush {
		to -= r.K.holdBack(text[max(r.Done, len(text)-(maxWindow-1)):])
	}
	if to <= r.Done {
		return ""
	}
	out, inRun := r.K.span(text, r.Done, to, r.inRun, r.With)
	r.Done, r.inRun = to, inRun
	return out
}
