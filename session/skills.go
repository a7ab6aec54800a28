// This file gives a session the person's skills and agent files (packages skills and
// agents find them): skills/list and agents/list, the skill tool, the skills' lines of the
// system prompt, and their /NAME commands. A workspace folder's skills and agents count
// only once the folder is trusted; an untrusted folder's are listed as ignored and named in
// its trust question.

package session

import (
	"path/filepath"

	"github.com/pid-agent/pid/agents"
	"github.com/pid-agent/pid/internal/mdfile"
	"github.com/pid-agent/pid/skills"
	"github.com/pid-agent/pid/toolexec"
)

// SkillName is the built-in tool that gives the model a skill's instructions.
const SkillName = skills.ToolName

// Skill is one skill of skills/list.
type Skill = skills.Skill

// Agent is one agent of agents/list.
type Agent = agents.Agent

// mdFolders returns the workspace folders whose skills and agents the session reads, with
// whether each is trusted: the session's own folders (a child's are its parent's: a child
// working in a worktree reads the person's folders, not the worktree's copy).
func (s *Session) mdFolders() []mdfile.Folder {
	if c := s.sub.child; c != nil {
		return c.parent.mdFolders()
	}
	roots := s.ws.Roots()
	out := make([]mdfile.Folder, len(roots))
	for i, r := range roots {
		out[i] = mdfile.Folder{Path: r, Trusted: s.host.instructionsTrusted(r)}
	}
	return out
}

// Skills returns the session's skills, read now: those in use and those left out, with why
// (see skills.Find). Problems with whole folders are reported once.
//
// Contract: safe for concurrent use; it reads the skill folders.
func (s *Session) Skills() []Skill {
	list, notes := skills.Find(s.mdFolders(), skills.UserDirs())
	for _, n := range notes {
		s.host.reportOnce(n, nil, n)
	}
	if list == nil {
		list = []Skill{}
	}
	return list
}

// Agents returns the session's agent files, read now: those in use and those left out,
// with why (see agents.Find). Problems with whole folders are reported once.
//
// Contract: safe for concurrent use; it reads the agent folders.
func (s *Session) Agents() []Agent {
	list, notes := agents.Find(s.mdFolders(), agents.UserDirs())
	for _, n := range notes {
		s.host.reportOnce(n, nil, n)
	}
	if list == nil {
		list = []Agent{}
	}
	return list
}

// ignoredSkillsAndAgents lists, for the trust question of the session's workspace folder,
// its skills and agents left out because the folder is not trusted.
func (s *Session) ignoredSkillsAndAgents() []string {
	root := s.root()
	if s.host.instructionsTrusted(root) {
		return nil
	}
	sk, _ := skills.Find([]mdfile.Folder{{Path: root}}, nil)
	ag, _ := agents.Find([]mdfile.Folder{{Path: root}}, nil)
	return append(skills.TrustItems(sk, root), agents.TrustItems(ag, root)...)
}

// skillTool returns the skill tool (skills.Tool); s may be nil for a description only
// (BuiltinTools).
func skillTool(s *Session) toolexec.Tool {
	if s == nil {
		return skills.Tool(nil, nil)
	}
	return skills.Tool(s.Skills, s.allowSkillReads)
}

// skillsBlock returns the system prompt's lines for the skills in use; "" when the session
// has no skill tool or no skill is in use.
func (s *Session) skillsBlock() string {
	if !s.builtin[SkillName] {
		return ""
	}
	return skills.PromptBlock(s.Skills())
}

// skillCommandText returns the prompt of a skill's /NAME command with args after it.
func (s *Session) skillCommandText(name, args string) (string, bool) {
	sk, ok := skills.Lookup(s.Skills(), name)
	if !ok {
		return "", false
	}
	s.allowSkillReads(sk)
	return skills.CommandText(sk, args), true
}

// allowSkillReads lets read read the files of the skill's folder, outside the workspace
// folders too (that folder only, read-only), once the model was given the skill.
func (s *Session) allowSkillReads(sk Skill) {
	if sk.Dir == "" {
		return
	}
	if err := s.ws.AllowRead(sk.Dir); err != nil {
		s.host.log.Warn("the skill's files cannot be read", "skill", sk.Name, "dir", sk.Dir, "err", err)
	}
}

// skillDirs returns the folders whose changes may change the skills (for the commands'
// watch): each skill folder of the session's workspace folders and of the person's, its
// parent, and each skill's own folder found now.
func (s *Session) skillDirs() []string {
	var dirs []string
	for _, f := range s.mdFolders() {
		for _, d := range skills.WorkspaceDirs {
			dirs = append(dirs, filepath.Join(f.Path, filepath.Dir(filepath.FromSlash(d))), filepath.Join(f.Path, filepath.FromSlash(d)))
		}
	}
	for _, d := range skills.UserDirs() {
		dirs = append(dirs, filepath.Dir(d), d)
	}
	for _, sk := range s.Skills() {
		dirs = append(dirs, filepath.Dir(sk.Path))
	}
	return dirs
}

// watchSkills adds the skill folders of every open session to the commands' watch (a skill
// folder made since the session started included). Called by the watch after a change.
func (h *Host) watchSkills() {
	h.mu.Lock()
	open := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		open = append(open, s)
	}
	h.mu.Unlock()
	for _, s := range open {
		h.commands.WatchDirs(s.skillDirs()...)
	}
}
