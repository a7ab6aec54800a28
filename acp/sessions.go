// This file holds ACP's methods for saved sessions: session/load (which replays the
// conversation before it answers, see replay.go), session/resume, session/list,
// session/close and session/delete. They run one at a time, in the order they arrived, each
// on a goroutine of its own (lifecycle), so that the read loop never waits for a file to be
// read or a running prompt to be cancelled.

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/leangc"
	"github.com/pid-agent/pid/internal/rpcconn"
	"github.com/pid-agent/pid/session"
)

// lifecycle returns work that runs f once every lifecycle request received before it has
// been answered, and answers with f's result. Contract: called on the read loop, as the
// last step of a long method that succeeded (the work must then run, or later lifecycle
// requests would wait for it forever).
func (s *server) lifecycle(f func() (any, error)) rpcconn.Work {
	s.mu.Lock()
	prev := s.lifeTail
	mine := make(chan struct{})
	s.lifeTail = mine
	s.mu.Unlock()
	return func(_ context.Context, reply func(any, error)) {
		defer close(mine)
		if prev != nil {
			<-prev
		}
		reply(f())
	}
}

// sessionError maps the session layer's error about session id to the wire.
func sessionError(id string, err error) error {
	if errors.Is(err, session.ErrUnknownSession) {
		return notFound(id, "%s", strings.TrimPrefix(err.Error(), session.ErrUnknownSession.Error()+": "))
	}
	return toWire(err)
}

type activateParams struct {
	SessionID  string            `json:"sessionId"`
	Cwd        *string           `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// AdditionalDirectories are the session's workspace folders besides its cwd from now
	// on (a live session keeps its own).
	AdditionalDirectories []string `json:"additionalDirectories"`
	// Meta is _meta: of pid's own settings, a load takes mcpServers only (the session
	// keeps the others it was saved with).
	Meta struct {
		PID *struct {
			MCPServers json.RawMessage `json:"mcpServers"`
		} `json:"pid"`
	} `json:"_meta"`
}

// activateResult is the result of session/load and session/resume: _meta.pid.cwd is the
// folder the session works in (its saved cwd, whatever cwd the request named).
type activateResult struct {
	Meta struct {
		PID struct {
			Cwd string `json:"cwd"`
			// Unsaved are the holes of the session's file: where messages are missing
			// because saving them failed.
			Unsaved []session.Unsaved `json:"unsaved,omitempty"`
		} `json:"pid"`
	} `json:"_meta"`
	Modes         *modeState     `json:"modes"`
	ConfigOptions []configOption `json:"configOptions"`
}

func (s *server) sessionLoad(p *activateParams) (rpcconn.Work, error) {
	return s.activate("session/load", p, true)
}

func (s *server) sessionResume(p *activateParams) (rpcconn.Work, error) {
	return s.activate("session/resume", p, false)
}

// activate is session/load (replay true) and session/resume: it makes a saved session live
// in this pid, working in its saved cwd. session/load first replays the conversation
// (see replay), refusing while a prompt of the session runs.
//
// The request's mcpServers (with _meta.pid.mcpServers, merged as session/new merges them)
// are the session's own MCP servers from now on, in place of those saved with it: an ACP
// client sends the list it would send for a new session, with the env values and headers
// that the session file does not keep. An empty list runs none of its own. They are checked
// as session/new checks them, before anything is read. A session live in this pid already
// (made by session/new or an earlier load) is taken as it is, servers included: when the
// request names others, a warning says so.
func (s *server) activate(method string, p *activateParams, replay bool) (rpcconn.Work, error) {
	switch {
	case p.SessionID == "":
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	case p.Cwd == nil || *p.Cwd == "":
		return nil, fmt.Errorf("%w: cwd is required (an absolute path)", errInvalidParams)
	case !filepath.IsAbs(*p.Cwd):
		return nil, fmt.Errorf("%w: cwd must be an absolute path, not %q", errInvalidParams, *p.Cwd)
	}
	id, asked := p.SessionID, filepath.Clean(*p.Cwd)
	var own json.RawMessage
	if p.Meta.PID != nil {
		own = p.Meta.PID.MCPServers
	}
	// servers converts the request's servers for a session working in cwd (a relative
	// command is found there); {} when the request names none.
	servers := func(cwd string) (json.RawMessage, error) {
		raw, err := mcpServersConfig(p.MCPServers, own, cwd)
		if err == nil && raw == nil {
			raw = json.RawMessage("{}")
		}
		return raw, err
	}
	requested, err := servers(asked)
	if err != nil {
		return nil, err
	}
	folders, err := additionalFolders(p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	return s.lifecycle(func() (any, error) {
		// A big session is read, and replayed, with the GC target lowered (see leangc.Lower).
		defer leangc.Lower()()
		st, fresh, err := s.activeState(method, id, asked, requested, folders, servers)
		if err != nil {
			return nil, err
		}
		// A fresh state is known to no one else yet; a live one's prompt must not start
		// while the replay is written.
		st.mu.Lock()
		defer st.mu.Unlock()
		if replay && st.cur != nil {
			return nil, fmt.Errorf("%w: a prompt is running in session %s; wait for its answer or cancel it (session/cancel), then load the session", errInvalidRequest, id)
		}
		cwd := st.ss.Cwd()
		if !sameFolder(asked, cwd) {
			s.log.Warn("the session works in the folder it was saved in, not the cwd of the request", "method", method, "session", id, "cwd", cwd, "requested", asked)
			s.mu.Lock()
			notices := s.caps.Notices
			s.mu.Unlock()
			if notices {
				st.update(notice{SessionUpdate: "notice", Severity: "info",
					Title: "This session works in " + cwd + ", the folder it was saved in, not in " + asked + "."})
			}
		}
		if !fresh {
			s.keepsServers(st, method, requested)
		} else {
			st.trustNotice()
		}
		if replay {
			st.replay(st.ss.Items())
			st.sendPlan() // the last plan, after the replay (plan.go)
		}
		st.sendCommands(true)
		if fresh {
			s.mu.Lock()
			s.sessions[id] = st
			s.mu.Unlock()
		}
		var res activateResult
		res.Meta.PID.Cwd = cwd
		res.Modes = modes(st.ss)
		res.ConfigOptions = configOptions(st.srv.host, st.ss)
		res.Meta.PID.Unsaved = st.ss.Unsaved()
		return &res, nil
	}), nil
}

// activeState returns the face's state of session id: the one live in this pid (fresh
// false), or a new one (fresh true, not yet registered) for the saved session made live in
// its saved cwd, running the request's MCP servers: requested, converted for the cwd asked,
// or servers(cwd) when the session works in another folder. Contract: called by lifecycle
// work only (so that no other load, close or delete runs meanwhile).
func (s *server) activeState(method, id, asked string, requested json.RawMessage, folders []string, servers func(cwd string) (json.RawMessage, error)) (st *sessionState, fresh bool, err error) {
	s.mu.Lock()
	st = s.sessions[id]
	s.mu.Unlock()
	if st != nil {
		return st, false, nil
	}
	if !s.host.SavesSessions() {
		return nil, false, unavailable(method)
	}
	// The header says which folder the session works in.
	cwd, err := s.host.SavedCwd(id)
	switch {
	case errors.Is(err, session.ErrUnknownSession):
		return nil, false, notFound(id, "no saved session has the id %q (session/list shows the saved ones)", id)
	case err != nil:
		return nil, false, fmt.Errorf("%w: %v", errSessionUnreadable, err)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, false, fmt.Errorf("%w: session %s works in %s, which is no longer a folder; restore that folder to continue the session, or delete it with session/delete", errFolderMissing, id, cwd)
	}
	if !sameFolder(asked, cwd) {
		// A relative command is found in the folder the server will run in.
		if requested, err = servers(cwd); err != nil {
			return nil, false, err
		}
	}
	ss, _, err := s.host.Load(id, session.Options{Face: s, Files: s.editorFiles(id), Terminals: s.editorTerminals(id), MCPServers: requested, ModeChanged: s.modeChanged, Folders: folders})
	if err != nil {
		return nil, false, sessionError(id, err)
	}
	return &sessionState{srv: s, ss: ss, mcpOwn: requested}, true, nil
}

// keepsServers warns, when requested names other MCP servers than those the live session
// st runs, that they are not used (the log, and a notice when the client takes notices).
// Contract: called with st.mu held.
func (s *server) keepsServers(st *sessionState, method string, requested json.RawMessage) {
	same, had, want := session.SameMCPServers(st.mcpOwn, requested)
	if same {
		return
	}
	msg := fmt.Sprintf("Session %s is already active in this pid and keeps its MCP servers (%s); the servers of this request (%s) are not used. Close the session (session/close) and load it again to run them.",
		st.ss.ID(), listOrNone(had), listOrNone(want))
	s.log.Warn(msg, "method", method)
	s.mu.Lock()
	notices := s.caps.Notices
	s.mu.Unlock()
	if notices {
		st.update(notice{SessionUpdate: "notice", Severity: "warning", Title: msg})
	}
}

// listOrNone is names joined with commas, or "none".
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// sameFolder reports whether two absolute paths name the same folder (the same text, or
// the same folder reached through links).
func sameFolder(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

type listParams struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

type listResult struct {
	Sessions   []sessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// sessionInfo is ACP's SessionInfo; _meta.pid has what pid's own session/list adds.
type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
	Meta      struct {
		PID struct {
			CreatedAt    string `json:"createdAt"`
			MessageCount int    `json:"messageCount"`
		} `json:"pid"`
	} `json:"_meta"`
}

// sessionList lists the saved sessions (of every folder, or of cwd), newest activity first,
// session.PageSize at a time.
func (s *server) sessionList(p *listParams) (rpcconn.Work, error) {
	var cwd, cursor string
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return nil, fmt.Errorf("%w: cwd must be an absolute path, not %q", errInvalidParams, *p.Cwd)
		}
		cwd = filepath.Clean(*p.Cwd)
	}
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	if !s.host.SavesSessions() {
		return nil, unavailable("session/list")
	}
	return s.lifecycle(func() (any, error) {
		page, next, err := s.host.List(cwd, cursor)
		if err != nil {
			return nil, err
		}
		res := &listResult{Sessions: make([]sessionInfo, 0, len(page)), NextCursor: next}
		for _, sum := range page {
			info := sessionInfo{SessionID: sum.SessionID, Cwd: sum.Cwd, Title: sum.Title, UpdatedAt: sum.UpdatedAt}
			info.Meta.PID.CreatedAt, info.Meta.PID.MessageCount = sum.CreatedAt, sum.MessageCount
			res.Sessions = append(res.Sessions, info)
		}
		return res, nil
	}), nil
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// sessionClose ends a session live in this pid: its running prompt is cancelled (and
// answers "cancelled" before the close does), then the session is unloaded; its file stays.
func (s *server) sessionClose(p *sessionIDParams) (rpcconn.Work, error) {
	if p.SessionID == "" {
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	}
	return s.lifecycle(func() (any, error) {
		s.mu.Lock()
		st := s.sessions[p.SessionID]
		s.mu.Unlock()
		if st == nil {
			return nil, notFound(p.SessionID, "session %s is not active in this pid, so there is nothing to close", p.SessionID)
		}
		return nil, s.end(st, false)
	}), nil
}

// sessionDelete closes the session when it is live in this pid, and removes its file.
func (s *server) sessionDelete(p *sessionIDParams) (rpcconn.Work, error) {
	if p.SessionID == "" {
		return nil, fmt.Errorf("%w: sessionId is required", errInvalidParams)
	}
	return s.lifecycle(func() (any, error) {
		s.mu.Lock()
		st := s.sessions[p.SessionID]
		s.mu.Unlock()
		if st != nil {
			return nil, s.end(st, true)
		}
		if !s.host.SavesSessions() {
			return nil, unavailable("session/delete")
		}
		if err := s.host.DeleteSession(p.SessionID); err != nil {
			return nil, sessionError(p.SessionID, err)
		}
		return nil, nil
	}), nil
}

// end closes a live session (and deletes its file when del is set): no prompt starts any
// more, the running one is cancelled as by session/cancel and has answered when end
// returns, and the session leaves this pid. Contract: called by lifecycle work only.
func (s *server) end(st *sessionState, del bool) error {
	id := st.ss.ID()
	st.mu.Lock()
	st.closing = true
	st.mu.Unlock()
	st.cancelTurn()
	var err error
	if del {
		err = st.srv.host.DeleteSession(id)
	} else {
		err = st.srv.host.CloseSession(id)
	}
	_, gone := st.srv.host.Get(id)
	// The cancelled prompt has ended (the layer waited for it) and answers under st.mu:
	// taking it here puts that answer before this one.
	st.mu.Lock()
	if gone == nil {
		st.closing = false // still live: the layer refused
	}
	st.mu.Unlock()
	if gone != nil {
		s.mu.Lock()
		if s.sessions[id] == st {
			delete(s.sessions, id)
		}
		s.mu.Unlock()
	}
	if err != nil {
		return sessionError(id, err)
	}
	return nil
}
