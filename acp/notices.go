// This file holds the notices pid sends outside a turn (ACP 1.25's notice session update,
// only to a client that declared session.notices): the trust decision pid made for a
// session's folder without asking, since ACP has no trust question. Notices during a turn
// (warnings, a hook that failed) go through Warn (face.go) and tell (mcp.go).

package acp

import (
	"fmt"
	"strings"
)

// noticesOn reports whether the client declared session.notices.
func (s *server) noticesOn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.Notices
}

// trustNotice tells the client, once per folder in this pid, that the session's folder is
// not trusted and what pid left out of it for that reason (its settings, its instruction
// files), and how to trust it. Nothing when the client takes no notices, when the folder is
// trusted or when nothing was left out. Contract: st.mu is held, and the client knows the
// session's id (after session/new's answer, or in a load before its answer).
func (st *sessionState) trustNotice() {
	s := st.srv
	if !s.noticesOn() {
		return
	}
	q, ok := s.host.TrustQuestion(st.ss)
	if !ok {
		return
	}
	st.update(notice{SessionUpdate: "notice", Severity: "info", Title: fmt.Sprintf(
		"pid does not trust %s yet, so it left out %s. To use them, add the folder to \"trustedFolders\" in your user settings (pid asks no trust question over ACP).",
		q.Folder, strings.Join(q.Ignored, ", "))})
}
