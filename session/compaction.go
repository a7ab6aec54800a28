// This file compacts a session's transcript: before a model call when the context grew past
// the model's window less the reserve, when the provider answers that the context is too
// long (then the call is made again, once), and on request (session/compact). The messages
// before a cut point are summarized by the session's own model; from then on the model sees
// the summary and the messages after the cut. The transcript and the file keep everything.

package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
)

// Compaction reasons.
const (
	ReasonManual    = "manual"
	ReasonThreshold = "threshold"
	ReasonOverflow  = "overflow"
)

// CompactResult is what session/compact answers.
type CompactResult struct {
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokensBefore"`
	// FirstKeptIndex is the index, among the session's items (Items), of the first message
	// the model still sees.
	FirstKeptIndex int `json:"firstKeptIndex"`
}

// view returns what the model sees of a transcript: the latest compaction's summary, then
// the messages from its cut on; the transcript itself when there was none. The view of the
// loop's transcript, which only grows, is kept and extended with the new messages, so a
// call costs what was added since the last, not the transcript's length.
func (s *Session) view(transcript []llm.Message) []llm.Message {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	n := len(s.compactions)
	if n == 0 {
		return transcript
	}
	last := s.compactions[n-1]
	if last.firstKept > len(transcript) {
		return transcript
	}
	vc := &s.viewCache
	if vc.compactions != n || vc.covered > len(transcript) || len(vc.msgs) == 0 {
		vc.compactions, vc.covered = n, last.firstKept
		vc.msgs = append(vc.msgs[:0], compact.SummaryMessage(last.summary))
	}
	vc.msgs = append(vc.msgs, transcript[vc.covered:]...)
	vc.covered = len(transcript)
	return slices.Clip(vc.msgs)
}

// transformContext is the agent's TransformContext: the view, compacted first when it has
// grown past the window less the reserve.
//
// Contract: called on the loop's goroutine before every model call, with the transcript so
// far, which it does not modify.
func (s *Session) transformContext(ctx context.Context, transcript []llm.Message) ([]llm.Message, error) {
	s.pmu.Lock()
	s.lastTranscript = transcript
	s.pmu.Unlock()
	v := s.view(transcript)
	if m := s.currentModel(); m.compact.Enabled && compact.ShouldCompact(s.contextTokens(transcript), m.window, m.compact.Fit(m.window)) {
		if _, err := s.compactNow(ctx, transcript, ReasonThreshold, ""); err == nil {
			v = s.view(transcript)
		}
	}
	return v, nil
}

// contextTokens is the context size of what the model sees of transcript. After a
// compaction, the usage the kept assistant messages reported was for the context before it:
// only messages after the compaction are trusted for usage, the rest are estimated. The
// counter keeps this at the cost of the new messages (the loop's transcript only grows).
//
// Contract: called on the loop's goroutine, or by Compact while it holds the session.
func (s *Session) contextTokens(transcript []llm.Message) int {
	s.counter.Update(transcript)
	s.pmu.Lock()
	var last *compactionRecord
	if n := len(s.compactions); n > 0 {
		c := s.compactions[n-1]
		last = &c
	}
	s.pmu.Unlock()
	if last == nil || last.firstKept > len(transcript) {
		return s.counter.Tokens(0, 0, 0)
	}
	summary := compact.SummaryMessage(last.summary)
	return s.counter.Tokens(compact.EstimateTokens(&summary), last.firstKept, last.at)
}

// compactNow compacts transcript (the whole of it, as the loop has it) and records the
// compaction; it tells the face with CompactionStart and CompactionEnd. On failure the
// transcript's view is unchanged and the error says why.
func (s *Session) compactNow(ctx context.Context, transcript []llm.Message, reason, instructions string) (CompactResult, error) {
	s.face.Emit(s, event.CompactionStart{Reason: reason})
	res, err := s.summarize(ctx, transcript, reason, instructions)
	end := event.CompactionEnd{Reason: reason, Summary: res.Summary, TokensBefore: res.TokensBefore}
	if err != nil {
		end.Summary, end.Err = "", err.Error()
	}
	s.face.Emit(s, end)
	return res, err
}

// summarize asks the model for the summary of the view's messages before the cut point.
func (s *Session) summarize(ctx context.Context, transcript []llm.Message, reason, instructions string) (CompactResult, error) {
	if err := s.modelProblem(); err != nil {
		return CompactResult{}, err
	}
	m := s.currentModel()
	v := s.view(transcript)
	tokens := s.contextTokens(transcript)
	first, ok := compact.CutPoint(v, m.compact.Fit(m.window).KeepRecentTokens)
	if !ok {
		return CompactResult{TokensBefore: tokens}, errors.New("there is nothing to compact yet: every message is among the most recent ones kept")
	}
	previous := ""
	if len(v) > 0 {
		previous, _ = compact.IsSummaryMessage(&v[0])
	}
	answer := m.provider.Stream(ctx, compact.SummaryRequest(v[:first], previous, instructions), nil)
	summary, err := compact.SummaryText(answer)
	if err != nil {
		if ctx.Err() != nil {
			return CompactResult{TokensBefore: tokens}, fmt.Errorf("the compaction was cancelled: %w", ctx.Err())
		}
		return CompactResult{TokensBefore: tokens}, err
	}
	// Index of v[first] in the transcript: v starts with the previous summary when there was
	// a compaction, standing for the messages before its cut.
	kept := first
	s.pmu.Lock()
	if n := len(s.compactions); n > 0 && previous != "" {
		kept = s.compactions[n-1].firstKept + first - 1
	}
	s.pmu.Unlock()
	rec := compactionRecord{at: len(transcript), firstKept: kept, summary: summary, tokensBefore: tokens, reason: reason, time: time.Now().UTC()}
	s.saveCompaction(&rec)
	s.pmu.Lock()
	idx := itemIndexOf(s.compactions, kept)
	s.pmu.Unlock()
	return CompactResult{Summary: summary, TokensBefore: tokens, FirstKeptIndex: idx}, nil
}

// Compact compacts the session on request (session/compact), with optional instructions for
// the summary. It claims the session as a prompt does (ErrBusy while one runs).
func (s *Session) Compact(ctx context.Context, instructions string) (CompactResult, error) {
	if err := s.Begin(); err != nil {
		return CompactResult{}, err
	}
	defer s.End()
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	res, err := s.compactNow(ctx, s.agent.Transcript(), ReasonManual, instructions)
	if err != nil && !isSetup(err) {
		err = fmt.Errorf("%w: %v", ErrFailed, err)
	}
	return res, err
}

// compactingProvider is the session's model as the loop sees it: each call goes to the
// session's model of the moment (SetModel changes it for the next call, never during one);
// when the provider answers that the context is too long, the session compacts and the call
// is made again, once. The first attempt's stream start is held back until it streams
// something, so a call retried after an overflow shows as one message.
type compactingProvider struct {
	s *Session
}

// Stream implements llm.Provider.
func (p *compactingProvider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	model := p.s.currentModel()
	if model.provider == nil {
		// Prompt refuses to run without a model, and SetModel never takes one away.
		msg := "the session has no usable model"
		if err := p.s.modelProblem(); err != nil {
			msg = err.Error()
		}
		return llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: msg, Timestamp: llm.Now()}
	}
	var held bool // the first attempt's start, not yet passed on
	var heldPartial *llm.Message
	streamed := false
	first := func(partial *llm.Message, ev llm.StreamEvent) {
		if sink == nil {
			return
		}
		if ev.Kind == llm.StreamStart && !streamed {
			// The start as it was: the partial message will have grown when it is passed on.
			snap := *partial
			snap.Content = append([]llm.Content(nil), partial.Content...)
			held, heldPartial = true, &snap
			return
		}
		if held {
			held = false
			sink(heldPartial, llm.StreamEvent{Kind: llm.StreamStart})
		}
		streamed = true
		sink(partial, ev)
	}
	m := model.provider.Stream(ctx, req, first)
	if streamed || ctx.Err() != nil || !compact.IsContextOverflow(&m) || !model.compact.Enabled {
		if held && sink != nil {
			sink(heldPartial, llm.StreamEvent{Kind: llm.StreamStart})
		}
		return m
	}
	s := p.s
	s.pmu.Lock()
	transcript := s.lastTranscript
	s.pmu.Unlock()
	if _, err := s.compactNow(ctx, transcript, ReasonOverflow, ""); err != nil {
		return m
	}
	retry := *req
	retry.Messages = s.view(transcript)
	return model.provider.Stream(ctx, &retry, sink)
}
