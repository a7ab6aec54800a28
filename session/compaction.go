// This file compacts a session's transcript: before a model call when the context grew past
// the model's window less the reserve, when the provider answers that the context is too
// long (then the call is made again, once), and on request (session/compact). The messages
// before a cut point are summarized by the session's own model; from then on the model sees
// the summary and the messages after the cut. The transcript and the file keep everything.
//
// A model call is preceded by one compaction at most, and after a compaction (or a failed
// attempt) the context must grow before the next automatic one: a model that reports more
// usage than its context holds compacts once, not before every call. A scripted model's
// summaries are scripted apart from its turns, so that compaction never shifts its script.

package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/history"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/setup"
)

// Compaction reasons.
const (
	ReasonManual    = history.ReasonManual
	ReasonThreshold = history.ReasonThreshold
	ReasonOverflow  = history.ReasonOverflow
)

// CompactResult is what session/compact answers; its FirstKeptIndex is among Items.
type CompactResult = compact.Result

// view returns what the model sees of a transcript: the latest compaction's summary, then
// the messages from its cut on, each message that carries a mode note with its note
// (modenote.go); the transcript itself when there was no compaction and there is no note.
// The view of the loop's transcript, which only grows, is kept and extended with the new
// messages, so a call costs what was added since the last, not the transcript's length.
//
// Contract: called by the run holding the session (compactingState).
func (s *Session) view(transcript []llm.Message) []llm.Message {
	last, n := s.lastCompaction()
	if n > 0 && last.FirstKept > len(transcript) {
		return transcript
	}
	if n == 0 && !s.hasNotes() {
		return transcript
	}
	vc := &s.compacting.view
	if !vc.made || vc.compactions != n || vc.covered > len(transcript) {
		vc.made, vc.compactions, vc.covered = true, n, 0
		vc.msgs = vc.msgs[:0]
		if n > 0 {
			vc.covered = last.FirstKept
			vc.msgs = append(vc.msgs, s.summaryMessage(last, n, transcript))
		}
	}
	vc.msgs = prompt.AppendNoted(vc.msgs, transcript[vc.covered:], vc.covered, s.notesFrom(vc.covered))
	vc.covered = len(transcript)
	return slices.Clip(vc.msgs)
}

// lastCompaction returns the transcript's last compaction, and how many it had (0: none,
// and the record is zero).
func (s *Session) lastCompaction() (history.Compaction, int) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	n := len(s.saved.compactions)
	if n == 0 {
		return history.Compaction{}, 0
	}
	return s.saved.compactions[n-1], n
}

// transformContext is the agent's TransformContext: the view, compacted first when it has
// grown past the window less the reserve, and grown enough since the last compaction
// (regrown).
//
// Contract: called on the loop's goroutine before every model call, with the transcript so
// far, which it does not modify.
func (s *Session) transformContext(ctx context.Context, transcript []llm.Message) ([]llm.Message, error) {
	s.awaitResumedServers(ctx, transcript)
	s.compacting.lastTranscript = transcript
	v := s.view(transcript)
	m := s.currentModel()
	fit := m.Compact.Fit(m.Window)
	if m.Compact.Enabled && compact.ShouldCompact(s.contextTokens(transcript), m.Window, fit) && s.regrown(transcript, fit) {
		if _, err := s.compactNow(ctx, transcript, ReasonThreshold, ""); err == nil {
			v = s.view(transcript)
		} else if ctx.Err() == nil {
			s.compacting.tried = len(transcript)
		}
	}
	return v, nil
}

// compactedAt returns the transcript's length at the last automatic compaction or failed
// attempt of one (compact.CompactedAt; 0 when there was none).
//
// Contract: called by the run holding the session (compactingState).
func (s *Session) compactedAt(transcript []llm.Message) int {
	last, _ := s.lastCompaction()
	return compact.CompactedAt(s.compacting.tried, last.At, len(transcript))
}

// regrown reports whether transcript has grown enough since the last compaction, or failed
// attempt, for a compaction at the threshold (compact.Counter.Regrown).
//
// Contract: called on the loop's goroutine, after contextTokens brought the counter up to
// transcript.
func (s *Session) regrown(transcript []llm.Message, fit compact.Settings) bool {
	return s.compacting.counter.Regrown(s.compactedAt(transcript), len(transcript), fit.KeepRecentTokens)
}

// contextTokens is the context size of what the model sees of transcript. After a
// compaction, the usage the kept assistant messages reported was for the context before it:
// only messages after the compaction are trusted for usage, the rest are estimated. The
// counter keeps this at the cost of the new messages (the loop's transcript only grows).
//
// Contract: called on the loop's goroutine, or by Compact while it holds the session.
func (s *Session) contextTokens(transcript []llm.Message) int {
	s.compacting.counter.Update(transcript)
	last, n := s.lastCompaction()
	if n == 0 || last.FirstKept > len(transcript) {
		return s.compacting.counter.Tokens(0, 0, 0)
	}
	s.summaryMessage(last, n, transcript)
	return s.compacting.counter.Tokens(s.compacting.summary.tokens, last.FirstKept, last.At)
}

// compactNow compacts transcript (the whole of it, as the loop has it) and records the
// compaction; it tells the face with CompactionStart and CompactionEnd. On failure the
// transcript's view is unchanged and the error says why.
func (s *Session) compactNow(ctx context.Context, transcript []llm.Message, reason, instructions string) (CompactResult, error) {
	s.face.Emit(s, event.CompactionStart{Reason: reason})
	if why := s.preCompactHooks(ctx, reason); why != "" {
		// A PreCompact hook cancelled an automatic compaction (hooks.go).
		s.face.Emit(s, event.CompactionEnd{Reason: reason, Err: "cancelled: " + why})
		return CompactResult{}, fmt.Errorf("%w: the compaction was cancelled: %s", ErrFailed, why)
	}
	res, usage, err := s.summarize(ctx, transcript, reason, instructions)
	end := event.CompactionEnd{Reason: reason, Summary: res.Summary, TokensBefore: res.TokensBefore}
	if err != nil {
		end.Summary, end.Err = "", err.Error()
	} else if last, n := s.lastCompaction(); n > 0 {
		// What the model now sees: the summary, and what was kept word for word (plan.go).
		msg, kept := s.summaryFor(last, transcript)
		end.Summary, end.Kept = compact.Readable(msg), &kept
	}
	s.face.Emit(s, end)
	if err == nil || usage != nil {
		s.emitUsageAfterCompaction(transcript, usage)
	}
	return res, err
}

// summarize asks the model for the summary of the view's messages before the cut point. It
// also returns the usage the summary call reported (nil when no call was made or it
// reported none).
func (s *Session) summarize(ctx context.Context, transcript []llm.Message, reason, instructions string) (CompactResult, *llm.Usage, error) {
	if err := s.ModelProblem(); err != nil {
		return CompactResult{}, nil, err
	}
	m := s.currentModel()
	v := s.view(transcript)
	tokens := s.contextTokens(transcript)
	sum, err := compact.Summarize(ctx, m.Summarizer, v, m.Compact.Fit(m.Window).KeepRecentTokens, instructions)
	if err != nil {
		return CompactResult{TokensBefore: tokens}, sum.Usage, err
	}
	// Index of the view's message sum.Cut in the transcript: the view starts with the
	// previous summary when there was a compaction, standing for the messages before its cut.
	kept := sum.Cut
	if last, n := s.lastCompaction(); n > 0 && sum.Previous != "" {
		kept = last.FirstKept + sum.Cut - 1
	}
	rec := history.Compaction{At: len(transcript), FirstKept: kept, Summary: sum.Text, TokensBefore: tokens, Reason: reason, Time: time.Now().UTC()}
	s.saveCompaction(&rec)
	s.saved.mu.Lock()
	idx := history.ItemIndex(s.saved.compactions, kept)
	s.saved.mu.Unlock()
	return CompactResult{Summary: sum.Text, TokensBefore: tokens, FirstKeptIndex: idx}, sum.Usage, nil
}

// Compact compacts the session on request (session/compact), with optional instructions for
// the summary. It claims the session as a prompt does (ErrBusy while one runs).
func (s *Session) Compact(ctx context.Context, instructions string) (CompactResult, error) {
	if err := s.Begin(); err != nil {
		return CompactResult{}, err
	}
	defer s.End()
	res, err := s.compactManual(ctx, instructions)
	if err != nil && !setup.Is(err) {
		err = fmt.Errorf("%w: %v", ErrFailed, err)
	}
	return res, err
}

// compactManual compacts the whole transcript on request, with optional instructions for
// the summary, in the session's run context. Contract: the caller holds the session.
func (s *Session) compactManual(ctx context.Context, instructions string) (CompactResult, error) {
	ctx, cancel := s.runContext(ctx)
	defer cancel()
	return s.compactNow(ctx, s.agent.Transcript(), ReasonManual, instructions)
}

// compactingProvider is the session's model as the loop sees it: each call goes to the
// session's model of the moment (SetModel changes it for the next call, never during one);
// when the provider answers that the context is too long, the session compacts and the call
// is made again, once, unless the transcript is the one of the last compaction or attempt
// (this call's own threshold compaction: one per call); compact.StreamRetrying makes a call
// retried after an overflow show as one message.
type compactingProvider struct {
	s *Session
}

// Stream implements llm.Provider.
func (p *compactingProvider) Stream(ctx context.Context, req *llm.Request, sink llm.StreamSink) llm.Message {
	model := p.s.currentModel()
	if model.Provider == nil {
		// Prompt refuses to run without a model, and SetModel never takes one away.
		msg := "the session has no usable model"
		if err := p.s.ModelProblem(); err != nil {
			msg = err.Error()
		}
		return llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: msg, Timestamp: llm.Now()}
	}
	// The instruction files and the mode's section (instructions.go); the loop's request
	// is kept for a call made again after a compaction, which reads the files again.
	s := p.s
	return compact.StreamRetrying(ctx, model.Provider, s.keyed(s.requestFor(req)), sink, func() *llm.Request {
		if !model.Compact.Enabled {
			return nil
		}
		transcript := s.compacting.lastTranscript
		if at := s.compactedAt(transcript); at != 0 && at == len(transcript) {
			return nil
		}
		if _, err := s.compactNow(ctx, transcript, ReasonOverflow, ""); err != nil {
			if ctx.Err() == nil {
				s.compacting.tried = len(transcript)
			}
			return nil
		}
		retry := *s.keyed(s.requestFor(req))
		retry.Messages = s.view(transcript)
		return &retry
	})
}
