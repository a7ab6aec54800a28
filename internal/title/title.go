// Package title writes the short lines a person reads about a tool call ("Run `go test`",
// "Read src/main.go"): one line of a text, cut with an ellipsis, and quoted as Markdown code.
// The built-in tools, the MCP tools and the faces all title calls with it, so that every
// tool reads alike. The entry points are Line and Code.
package title

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pid-agent/pid/llm"
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

// First returns the first line of s, trimmed. Pure.
func First(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// clip cuts s to n runes, with an ellipsis when it was longer.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Args returns a call's arguments as a short line: its first string argument of command,
// pattern, path, query and description, quoted, cut to 80 characters ("" for none). Pure.
func Args(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "pattern", "path", "query", "description"} {
		if v, ok := m[k].(string); ok {
			return fmt.Sprintf("%q", clip(First(v), 80))
		}
	}
	return ""
}

// Result returns a result as a short line: "N lines" for a text of several lines, else its
// line cut to 80 characters, or "error: " and its first line for an error result. Pure.
func Result(content []llm.Content, isError bool) string {
	text := ""
	lines := 0
	for _, c := range content {
		if c.Type == llm.ContentText {
			text += c.Text
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l != "" {
			lines++
		}
	}
	s := clip(First(text), 80)
	if isError {
		return "error: " + s
	}
	if lines > 1 {
		return fmt.Sprintf("%d lines", lines)
	}
	return s
}
