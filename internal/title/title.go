// Package title writes the short lines a person reads about a tool call ("Run `go test`",
// "Read src/main.go"): one line of a text, cut with an ellipsis, and quoted as Markdown code.
// The built-in tools, the MCP tools and the faces all title calls with it, so that every
// tool reads alike. The entry points are Line and Code.
package title

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns the first line of s, trimmed, cut to max runes; an ellipsis marks what was
// cut (a later line, or the end of a long one). Pure.
func Line(s string, max int) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = strings.TrimSpace(s[:i]), true
	}
	if utf8.RuneCountInString(s) > max {
		s, cut = string([]rune(s)[:max]), true
	}
	if cut {
		s = strings.TrimRightFunc(s, unicode.IsSpace) + "…"
	}
	return s
}

// Code quotes s as Markdown inline code, with a longer fence when s holds a backtick. Pure.
func Code(s string) string {
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// Or returns s, or def when s is empty. Pure.
func Or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
