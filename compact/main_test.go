// This file holds the test main (goleak) and the message builders the tests share.

package compact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// text returns a string EstimateTokens counts as exactly tokens tokens.
func text(tokens int) string { return strings.Repeat("abcd", tokens) }

// u is a user message worth tokens tokens.
func u(tokens int) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Content{llm.Text(text(tokens))}}
}

// a is an assistant message worth tokens tokens (at least 1 per call) calling the tool
// "x" with arguments {} once per id; it stops for tool use when it calls.
func a(tokens int, ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd}
	chars := 4*tokens - 3*len(ids) // each call counts len("x") + len("{}")
	if chars < 0 {
		panic("a: too few tokens for the calls")
	}
	m.Content = append(m.Content, llm.Text(strings.Repeat("z", chars)))
	for _, id := range ids {
		m.Content = append(m.Content, llm.NewToolCall(id, "x", json.RawMessage(`{}`)))
		m.StopReason = llm.StopToolUse
	}
	return m
}

// dead is a like a, but failed (llm.StopError) or aborted.
func dead(stop llm.StopReason, tokens int, ids ...string) llm.Message {
	m := a(tokens, ids...)
	m.StopReason = stop
	m.ErrorMessage = "it failed"
	return m
}

// r is the result of call id worth tokens tokens.
func r(id string, tokens int) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: "x", Content: []llm.Content{llm.Text(text(tokens))}}
}

// used returns m with a reported usage.
func used(m llm.Message, u llm.Usage) llm.Message {
	m.Usage = &u
	return m
}

func msgs(ms ...llm.Message) []llm.Message { return ms }
