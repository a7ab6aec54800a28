// This file keeps API keys out of text: every error a provider returns passes through Redact.

package wire

import "strings"

// redactWindow is the shortest run of a key's characters that Redact removes. Servers echo
// keys whole or masked ("sk-abc…wxyz"); a window of 8 catches the whole key and any long
// fragment while leaving ordinary words alone (a key is random, a word is not).
const redactWindow = 8

// Redacted is what replaces a key, or a fragment of one, in text.
const Redacted = "[redacted]"

// Redact returns s with key, and every run of at least 8 characters that also occurs in
// key, replaced by "[redacted]". An empty key, or one shorter than 8 characters, is
// replaced only where it occurs whole.
func Redact(s, key string) string {
	if key == "" || s == "" {
		return s
	}
	if len(key) < redactWindow {
		return strings.ReplaceAll(s, key, Redacted)
	}
	windows := make(map[string]struct{}, len(key)-redactWindow+1)
	for i := 0; i+redactWindow <= len(key); i++ {
		windows[key[i:i+redactWindow]] = struct{}{}
	}
	// hit[i] is true when byte i of s lies inside some window of the key.
	var hit []bool
	for i := 0; i+redactWindow <= len(s); i++ {
		if _, ok := windows[s[i:i+redactWindow]]; ok {
			if hit == nil {
				hit = make([]bool, len(s))
			}
			for j := i; j < i+redactWindow; j++ {
				hit[j] = true
			}
		}
	}
	if hit == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !hit[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(Redacted)
		for i < len(s) && hit[i] {
			i++
		}
	}
	return b.String()
}
