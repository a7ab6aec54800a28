// This file holds workspace trust as the faces see it: whether a session's folder is
// trusted, the one question per folder a face may put to the person, and trust/list,
// trust/grant and trust/revoke.

package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pid-agent/pid/trust"
)

// TrustQuestion is what a face asks the person about a workspace folder whose settings were
// partly ignored, or whose instruction files were left out, because the folder is not
// trusted.
type TrustQuestion struct {
	// Folder is the workspace folder, absolute, as the editor named it.
	Folder string
	// Ignored lists, in words a person reads, what its settings set that was left out, and
	// its instruction files ("instructions: AGENTS.md").
	Ignored []string
}

// trustedRoot is the Loader's Trusted option: trust.json, or this daemon's own grant.
func (h *Host) trustedRoot(root string) bool {
	h.mu.Lock()
	here := h.trustedHere[trust.RealPath(root)]
	h.mu.Unlock()
	return here || h.trust.Trusted(root)
}

// TrustQuestion returns the question to put to the person about the workspace folder of a
// session that just started, and reports whether there is one: the folder is not trusted,
// its settings set something that was ignored or it has instruction files, and no question
// about it was handed out before by this host. Once per folder per host: a second call for
// the same folder reports false.
//
// Contract: called by a face right after New, from any goroutine; it never blocks.
func (h *Host) TrustQuestion(s *Session) (TrustQuestion, bool) {
	if h.loader == nil {
		return TrustQuestion{}, false
	}
	root := s.root()
	var ignored []string
	if !h.loader.Trusted(root) {
		ignored = append(ignored, h.loader.Ignored(root)...)
	}
	// The workspace's instruction files (instructions.go), left out until it is trusted.
	ignored = append(ignored, s.ignoredInstructions()...)
	// Its skills and agent files (skills.go), left out until it is trusted.
	ignored = append(ignored, s.ignoredSkillsAndAgents()...)
	if len(ignored) == 0 {
		return TrustQuestion{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asked[root] {
		return TrustQuestion{}, false
	}
	h.asked[root] = true
	return TrustQuestion{Folder: root, Ignored: ignored}, true
}

// TrustedFolder is one entry of trust/list.
type TrustedFolder = trust.Folder

// TrustList returns the folders trust.json trusts (trust/list). The user settings'
// trustedFolders are the user's own file and are not listed.
func (h *Host) TrustList() ([]TrustedFolder, error) {
	if h.trust == nil {
		return nil, fmt.Errorf("%w: trusted folders (see pid's log)", ErrUnavailable)
	}
	folders, err := h.trust.List()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return folders, nil
}

// Trust trusts a folder: kept in trust.json, or for this daemon only when that file cannot
// be written (which is reported). Running sessions in that folder get its full settings at
// their next decision, and the MCP servers its settings name start for them now; its model
// applies to the next session.
//
// Contract: safe for concurrent use. folder must be an absolute path of an existing folder
// (ErrInvalid otherwise).
func (h *Host) Trust(folder string) error {
	if err := checkFolder(folder); err != nil {
		return err
	}
	var err error
	if h.trust == nil {
		err = errors.New("trust.json could not be opened")
	} else {
		_, err = h.trust.Grant(folder)
	}
	if err != nil {
		h.mu.Lock()
		h.trustedHere[trust.RealPath(folder)] = true
		h.mu.Unlock()
		h.opts.Report(fmt.Sprintf("%s is trusted until pid stops; it could not be kept: %v", folder, err), false)
	}
	h.refreshTrust(folder)
	return nil
}

// Untrust stops trusting a folder (trust/revoke): from the next decision on, its settings are
// narrow-only again, and the MCP servers its settings name stop now (a call in flight on one
// fails). A folder that is not trusted is ErrInvalid.
//
// Contract: safe for concurrent use.
func (h *Host) Untrust(folder string) error {
	if folder == "" {
		return invalid("folder is required")
	}
	h.mu.Lock()
	real := trust.RealPath(folder)
	here := h.trustedHere[real]
	delete(h.trustedHere, real)
	h.mu.Unlock()
	var err error
	if h.trust == nil {
		err = fmt.Errorf("%w: %s", trust.ErrUnknownFolder, folder)
	} else {
		err = h.trust.Revoke(folder)
	}
	h.refreshTrust(folder)
	switch {
	case err == nil, here && errors.Is(err, trust.ErrUnknownFolder):
		return nil
	case errors.Is(err, trust.ErrUnknownFolder):
		return invalid("%s is not a trusted folder (trust/list lists them; folders in the user settings' trustedFolders are revoked by editing that file)", folder)
	}
	return err
}

// refreshTrust republishes the policies with the new trust of folder, and works out again
// the MCP servers of the sessions in it.
func (h *Host) refreshTrust(folder string) {
	if h.loader != nil {
		h.loader.Refresh()
	}
	real := trust.RealPath(folder)
	h.mu.Lock()
	var in []*Session
	for _, s := range h.sessions {
		in = append(in, s)
	}
	h.mu.Unlock()
	for _, s := range in {
		if trust.RealPath(s.root()) == real {
			s.refreshMCP()
		}
	}
}

// checkFolder reports a folder argument that is not an absolute path of an existing folder.
func checkFolder(folder string) error {
	if folder == "" {
		return invalid("folder is required")
	}
	if !filepath.IsAbs(folder) {
		return invalid("folder must be an absolute path, not %q", folder)
	}
	if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
		return invalid("folder %s is not an existing folder", folder)
	}
	return nil
}
