// This file measures how much of a request the provider's prompt cache can serve: the
// request is laid out in the order the cache reads it (tools, system prompt, then each
// message's blocks), and a request's share is the length of the prefix it has in common with
// the previous request of its conversation, up to that request's last cache breakpoint,
// over that breakpoint's offset.

package main

import (
	"strings"

	"github.com/tidwall/gjson"
)

// layout is a request in cache order: its units' bytes one after the other, and the offsets
// after the units that carry a cache breakpoint, in order (for the OpenAI APIs, which cache
// whatever prefix they saw before, the end).
type layout struct {
	bytes       []byte
	breakpoints []int
	// anyPrefix is set for an API whose cache serves any prefix it saw (OpenAI's, in steps
	// of 128 tokens), rather than the prefixes ending at breakpoints.
	anyPrefix bool
}

// last returns the offset of the last breakpoint (0 for none).
func (l layout) last() int {
	if len(l.breakpoints) == 0 {
		return 0
	}
	return l.breakpoints[len(l.breakpoints)-1]
}

// ephemeral is the breakpoint as pid writes it. It is left out of a unit's bytes: the cache
// matches content, and the breakpoint moves to the newest message every request.
const ephemeral = `,"cache_control":{"type":"ephemeral"}`

// cacheLayout lays out a request body sent to path.
func cacheLayout(path string, body []byte) layout {
	var l layout
	add := func(kind, raw string) {
		l.bytes = append(l.bytes, kind...)
		l.bytes = append(l.bytes, ':')
		l.bytes = append(l.bytes, strings.ReplaceAll(raw, ephemeral, "")...)
		l.bytes = append(l.bytes, '\n')
		if strings.Contains(raw, ephemeral) {
			l.breakpoints = append(l.breakpoints, len(l.bytes))
		}
	}
	root := gjson.ParseBytes(body)
	for _, t := range root.Get("tools").Array() {
		add("tool", t.Raw)
	}
	switch {
	case strings.HasSuffix(path, "/messages"):
		for _, b := range root.Get("system").Array() {
			add("system", b.Raw)
		}
		for _, m := range root.Get("messages").Array() {
			add("role", m.Get("role").Raw)
			for _, b := range m.Get("content").Array() {
				add("block", b.Raw)
			}
		}
	case strings.HasSuffix(path, "/responses"):
		add("instructions", root.Get("instructions").Raw)
		for _, it := range root.Get("input").Array() {
			add("item", it.Raw)
		}
		l.breakpoints, l.anyPrefix = []int{len(l.bytes)}, true
	default:
		for _, m := range root.Get("messages").Array() {
			add("message", m.Raw)
		}
		l.breakpoints, l.anyPrefix = []int{len(l.bytes)}, true
	}
	return l
}

// share returns the common prefix of cur with prev up to prev's last breakpoint, that
// breakpoint's offset, and hit: the offset of prev's last breakpoint within the common
// prefix, which is what a cache that stores a prefix at each breakpoint (Anthropic's) can
// serve cur (for the OpenAI APIs, whose cache keeps any prefix, the prefix itself).
func share(prev, cur layout) (prefix, breakpoint, hit int) {
	breakpoint = prev.last()
	a, b := prev.bytes[:breakpoint], cur.bytes
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	if prev.anyPrefix {
		return prefix, breakpoint, prefix
	}
	for _, bp := range prev.breakpoints {
		if bp <= prefix {
			hit = bp
		}
	}
	return prefix, breakpoint, hit
}
