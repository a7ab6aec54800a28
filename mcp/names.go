// This file names MCP tools the way pid offers them to the model: mcp__<server>__<tool>,
// sanitized to the characters every provider accepts and cut to their length limit.

package mcp

import (
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxToolName is the longest tool name the providers accept.
const MaxToolName = 64

// ToolName returns the name pid gives the tool named tool on the server named server:
// "mcp__" + server + "__" + tool, with every character outside [A-Za-z0-9_-] replaced by
// '_' and at most MaxToolName characters. A name that would be longer keeps its start and
// ends with '_' and 8 hex digits of a hash of the original server and tool names, so two
// long names that differ only at the end stay apart. When taken (nil: nothing is taken)
// reports the name as used, "_2", "_3", ... is appended (within the limit) until it is not.
//
// Contract: pure and deterministic for the same taken answers; taken is called
// synchronously, at least once when it is not nil.
func ToolName(server, tool string, taken func(string) bool) string {
	base := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	name := fitName(base, server, tool, MaxToolName)
	if taken == nil || !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		cand := fitName(base, server, tool, MaxToolName-len(suffix)) + suffix
		if !taken(cand) {
			return cand
		}
	}
}

// sanitize replaces each character outside [A-Za-z0-9_-] with '_' (one per character,
// whatever its UTF-8 length); an empty name becomes "_".
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	clean := true
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// fitName cuts base to max characters, ending a cut name with '_' and a hash of the
// original names.
func fitName(base, server, tool string, max int) string {
	if len(base) <= max {
		return base
	}
	h := fnv.New32a()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	sum := strconv.FormatUint(uint64(h.Sum32()), 16)
	sum = strings.Repeat("0", 8-len(sum)) + sum
	return base[:max-9] + "_" + sum
}

// AllTools returns the tools of servers, in the order given (each server's tools in its
// order), with names unique across them: a tool whose name an earlier one took is renamed
// by ToolName. A session offers this list; Server.Tools alone is unique within its server.
//
// Contract: safe for concurrent use; the result is the caller's.
func AllTools(servers ...*Server) []Tool {
	var out []Tool
	taken := map[string]bool{}
	for _, s := range servers {
		for _, t := range s.Tools() {
			if taken[t.Name] {
				t.Name = ToolName(t.Server, t.Original, func(n string) bool { return taken[n] })
			}
			taken[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}
