// Package textcut cuts bytes read from files into text a model can be shown: a prefix that
// does not split a rune (Runes) and valid UTF-8 (Valid). The search engine's grep lines and
// the read tool's lines both go through it. It is pure and safe for concurrent use.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Runes returns the longest prefix of s of at most max bytes that does not split a rune
// (s itself when it is no longer than max). Bytes that are not UTF-8 count as runes of
// their own; the result shares s's memory.
func Runes(s []byte, max int) []byte {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Valid returns s as a string with each run of invalid UTF-8 replaced by one U+FFFD.
func Valid(s []byte) string { return strings.ToValidUTF8(string(s), "\uFFFD") }
