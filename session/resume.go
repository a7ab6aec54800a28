// This file keeps a resumed session on the provider's prompt cache: the first model call of
// a session loaded with a transcript waits for its MCP servers still starting, so that it
// offers the tools the conversation had (an eager server's tools, and the deferred tools
// its tool_search calls activated), in the same words, and the request is the one the
// conversation would have sent without the reload, byte for byte. A new session does not
// wait: there is no cached prefix to keep, and tool_search waits for its servers itself.

package session

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/pid-agent/pid/llm"
)

// resumeState says whether the session's first model call is still to come. Touched by the
// loop's goroutine only, but atomic so that a racing reader never matters.
type resumeState struct {
	called atomic.Bool
}

// awaitResumedServers waits, before the first model call in this process of a session
// whose transcript already holds a model's answer (a loaded one), for its MCP servers that are starting (each start
// is bounded by the manager's StartTimeout; a server that fails is waited for no more, and
// its tools show as unavailable as they would have). It returns at once on later calls,
// and when ctx ends.
//
// Contract: called on the loop's goroutine before each model call, with the transcript so
// far (which ends with the prompt's messages).
func (s *Session) awaitResumedServers(ctx context.Context, transcript []llm.Message) {
	if s.resume.called.Swap(true) || s.mcp == nil || !slices.ContainsFunc(transcript, isAssistant) {
		return
	}
	s.mcp.WaitStarting(ctx)
}

func isAssistant(m llm.Message) bool { return m.Role == llm.RoleAssistant }
