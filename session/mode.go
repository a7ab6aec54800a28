// This file holds the session's mode (default, acceptEdits, plan, auto, bypassPermissions):
// which modes a session is offered, how the mode changes (SetMode, exit_plan_mode), and which
// calls a mode lets run without asking (see docs/permissions.md for the decision order). The
// model learns of a change from a note in its next message (modenote.go): the system prompt
// and the tools, exit_plan_mode among them, are the same in every mode. What the modes are
// apart from a session (the list, plan mode's tool and refusals, the workspace rule) is
// package modes'.

package session

import (
	"context"
	"sync"
	"time"

	"github.com/pid-agent/pid/gate"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/prompt"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/toolexec"
)

// The modes' ids, as ACP clients know them (the notes that tell the model are package
// prompt's).
const (
	ModeDefault     = prompt.ModeDefault
	ModeAcceptEdits = prompt.ModeAcceptEdits
	ModePlan        = prompt.ModePlan
	ModeAuto        = prompt.ModeAuto
	ModeBypass      = prompt.ModeBypass
)

// ExitPlanModeName is the built-in tool the model calls to put its plan to the person and
// leave plan mode. It is offered in every mode (so the tools stay the same bytes), and
// outside plan mode its call is refused.
const ExitPlanModeName = modes.ExitPlanName

// ModeInfo describes a mode, as session/new's modes.availableModes lists it.
type ModeInfo = modes.Info

// Modes is a session's mode and the modes it may switch to (session/new's modes).
type Modes = modes.Modes

// modeState is the session's mode. Read by the batches' goroutines (decide) and the face's;
// changed by the face's (SetMode) and by exit_plan_mode's approval.
type modeState struct {
	// mu guards cur.
	mu  sync.Mutex
	cur string
}

// availableModes returns the modes this host offers: bypassPermissions only when the user
// settings allow it.
func (h *Host) availableModes() []ModeInfo {
	return modes.Available(h.loader != nil && h.loader.AllowBypassPermissions())
}

// checkMode returns an invalid error when id is no mode this host offers.
func (h *Host) checkMode(id string) error {
	if err := modes.Check(id, h.availableModes()); err != nil {
		return invalid("%s", err)
	}
	return nil
}

// Mode returns the session's mode.
func (s *Session) Mode() string {
	s.mode.mu.Lock()
	defer s.mode.mu.Unlock()
	return s.mode.cur
}

// Modes returns the session's mode and the modes it may switch to.
func (s *Session) Modes() Modes {
	return Modes{CurrentModeID: s.Mode(), AvailableModes: s.host.availableModes()}
}

// SetMode switches the session to the mode id, which must be one the host offers (else an
// invalid error). When the mode changes, the session's file keeps it and the face's
// ModeChanged hears of it.
func (s *Session) SetMode(id string) error {
	if err := s.host.checkMode(id); err != nil {
		return err
	}
	s.setMode(id)
	return nil
}

// setMode switches the session to the mode id, checked by the caller.
func (s *Session) setMode(id string) {
	s.mode.mu.Lock()
	changed := s.mode.cur != id
	s.mode.cur = id
	s.mode.mu.Unlock()
	s.ws.ForceReadOnlySandbox(id == ModePlan)
	if !changed {
		return
	}
	s.saveMode(id)
	if s.modeChanged != nil {
		s.modeChanged(s, id)
	}
}

// decideExitPlan is beforeToolCall's decision on exit_plan_mode (gate.ExitPlan): the person
// reads the plan and allows (the session switches to default, or to the mode the answer
// names) or denies (the model keeps planning, with the reason).
func (s *Session) decideExitPlan(ctx context.Context, in toolexec.BeforeInput) (*toolexec.Block, decision) {
	ask := func(q Approval) (Answer, error) { return s.face.Ask(ctx, s, q) }
	b, d, next := gate.ExitPlan(s.Mode(), in.Call, ask, func() bool { return ctx.Err() != nil })
	if next != "" {
		s.setMode(next)
	}
	return b, d
}

// exitPlanTool is exit_plan_mode (modes.ExitPlanTool), telling the model the mode it is in.
func (s *Session) exitPlanTool() toolexec.Tool { return modes.ExitPlanTool(s.Mode) }

// startMode returns the mode a session starts in (modes.Start): a loaded one's saved mode,
// else the settings' mode, checked.
func (h *Host) startMode(cfg Config, saved string, loaded bool) (string, error) {
	mode, err := modes.Start(saved, cfg.Mode, loaded, h.availableModes())
	if err != nil {
		return "", invalid("%s", err)
	}
	return mode, nil
}

// saveMode keeps a mode change: in the header while the session's file does not exist yet,
// else as a mode entry; either way the next message saved tells the model (modenote.go).
func (s *Session) saveMode(id string) {
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	s.saved.mode = id
	if s.saved.file == nil && len(s.saved.entryIDs) == 0 && len(s.saved.compactions) == 0 {
		s.saved.header.Mode = id
		return
	}
	if s.saved.file == nil || s.saved.err != nil {
		return
	}
	s.saved.lastWrite.Store(time.Now().UnixNano())
	if _, err := s.saved.file.Append(store.Entry{Kind: store.KindMode, Timestamp: time.Now().UTC(), Mode: id}); err != nil {
		s.saveFailedLocked(err)
	}
}
