// This file holds the words of a sandboxed command's result: its details (how it was
// contained), the check after it that puts the protected paths back, the note after a
// refusal of the sandbox, and the refusal when the kernel cannot give the sandbox.

package launch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pid-agent/pid/netproxy"
	"github.com/pid-agent/pid/protected"
	"github.com/pid-agent/pid/sandbox"
)

// Details are how a command was contained: bash's details.sandbox, a job's, the audit
// log's.
type Details struct {
	// Mode is "workspace-write", "read-only" or "off" (an unsandboxed call: Escalated).
	Mode string `json:"mode"`
	// Network says the command could reach the network directly (the host's network).
	Network bool `json:"network"`
	// Proxy says the command's only way out was pid's proxy (the allowlist network).
	Proxy bool `json:"proxy,omitempty"`
	// RefusedHosts are the destinations the proxy refused to the command's connections.
	RefusedHosts []netproxy.Refusal `json:"refusedHosts,omitempty"`
	// LoopbackCut says the network was cut without a network namespace (none could be
	// made), with Landlock's TCP rules and a seccomp filter, which cut the sandbox's own
	// loopback too.
	LoopbackCut bool `json:"loopbackCut,omitempty"`
	// Escalated says the model asked for this call to run unsandboxed, and it was allowed.
	Escalated bool `json:"escalated,omitempty"`
	// Limits are the command's limits, and how they were applied.
	Limits *Limits `json:"limits,omitempty"`
	// Reverted are the protected paths (absolute) the command created or changed, which
	// the check after it removed or put back (or could not: the text says which).
	Reverted []string `json:"reverted,omitempty"`
}

// Limits are details.sandbox.limits: the command's limits, and how they were applied.
type Limits struct {
	MemoryMB  int `json:"memoryMB"`
	Processes int `json:"processes"`
	// MemoryBy says what caps the memory: "rlimit" (RLIMIT_DATA, for each process).
	MemoryBy string `json:"memoryBy"`
	// ProcessesBy says what caps the processes and threads: "cgroup v2" or "cgroup v1"
	// (the pids controller), "rlimit" (RLIMIT_NPROC), or "none" (pid runs as root, whom
	// RLIMIT_NPROC does not hold, and could make no cgroup).
	ProcessesBy string `json:"processesBy"`
	// PidNamespace says nothing the command started outlives it.
	PidNamespace bool `json:"pidNamespace"`
}

// CheckAfter is the check after every sandboxed command: it puts the protected paths back
// as they were before the command (sandbox.Guard.Check), records what it found in the
// details, and returns the note for the result ("" when nothing was found).
//
// Contract: called once, once the helper has been waited for (a terminal's command: once
// it has exited): with a PID namespace, every process the command started has ended by
// then.
func (s *Sandboxed) CheckAfter() string {
	if s.before == nil {
		return ""
	}
	found, incomplete := s.guard.Check(s.before)
	if len(found) == 0 && incomplete == "" {
		return ""
	}
	if len(found) == 0 {
		return "\n\n[pid: " + incomplete + ". Tell the user: a .git made there would make git run commands outside the sandbox.]"
	}
	var b strings.Builder
	b.WriteString("\n\n[pid: this command ")
	for i, r := range found {
		s.mu.Lock()
		s.details.Reverted = append(s.details.Reverted, r.Path)
		s.mu.Unlock()
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case r.What == "created" && r.Restored:
			fmt.Fprintf(&b, "created %s, which pid removed", r.Path)
		case r.What == "created":
			fmt.Fprintf(&b, "created %s, which pid could not remove (%s)", r.Path, r.Why)
		case r.Restored:
			fmt.Fprintf(&b, "%s %s, which pid put back", r.What, r.Path)
		default:
			fmt.Fprintf(&b, "%s %s, which pid could not put back (%s)", r.What, r.Path, r.Why)
		}
	}
	b.WriteString(". Other programs (git, editors, direnv, other agents) load commands from these paths, so sandboxed commands may not create or change them. " +
		"If the task needs it, call bash again with unsandboxed: true and a justification; the user will be asked. Tell the user what happened.")
	if incomplete != "" {
		b.WriteString(" Also, " + incomplete + ".")
	}
	b.WriteString("]")
	return b.String()
}

// refusal is an error written as prose for the model and the person: whole sentences,
// unlike Go's terse error strings.
type refusal struct{ text string }

func (r *refusal) Error() string { return r.text }

// failure is the refusal when the sandbox cannot be given: nothing ran. Its text is for
// the model and the person: it says what is missing and which setting to change.
func failure(err error) error {
	return &refusal{fmt.Sprintf("The command did not run: pid's sandbox could not be set up: %v.\n\n"+
		"pid never runs a command unsandboxed on its own. To run commands without the sandbox, set "+
		`"sandbox": {"mode": "off"} in your user settings (~/.config/pid/settings.json) or the editor's settings; `+
		"or call bash with unsandboxed: true and a justification, which the user is asked to allow.", strings.TrimSuffix(err.Error(), "."))}
}

// denialMarks are what a failed command's output says when the sandbox may have refused
// it something.
var denialMarks = []string{
	"Permission denied", "Operation not permitted", "Read-only file system", "Network is unreachable",
	"Connection refused", "Could not resolve host", "Temporary failure in name resolution", "EACCES", "EPERM",
	"EROFS", "ENETUNREACH", "ECONNREFUSED",
}

// symptoms are what a command's output says, whatever its exit code, when the sandbox
// refused it something: a program that reports a failure and goes on (a build step, a
// test runner, a shell loop) exits 0. "Permission denied" counts only next to a path the
// sandbox does not let it write (symptomPath).
var symptoms = []string{
	"Could not resolve host", "Network is unreachable", "Temporary failure in name resolution",
	"Name or service not known", "Read-only file system",
}

// Note returns the note added to a sandboxed command's result when its output shows the
// sandbox may have refused it something (failed: any of denialMarks; otherwise one of
// symptoms; either way "Permission denied" on a path outside the writable folders, or a
// path of a private place that is missing), naming what is writable; "" otherwise.
// output is what the command printed (before CheckAfter's and ProxyRefusals' lines), and
// failed says it exited with a code other than 0 or was killed by a signal. Pure: safe
// to call at any time after the command was started.
func (s *Sandboxed) Note(output string, failed bool) string {
	hit := false
	marks := symptoms
	if failed {
		marks = denialMarks
	}
	for _, m := range marks {
		if strings.Contains(output, m) {
			hit = true
			break
		}
	}
	if !hit {
		hit = deniedOutside(s.pol, s.dir, output)
	}
	if !hit && failed && s.pol.Mode == sandbox.ModeWorkspaceWrite && gitWord.MatchString(s.command) {
		hit = true // git fails silently at times when .git is read-only (git stash)
	}
	if !hit {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n[pid's sandbox (%s) may have refused this. Writable: %s", s.pol.Mode, strings.Join(s.pol.Writable, ", "))
	if s.pol.Mode == sandbox.ModeWorkspaceWrite {
		fmt.Fprintf(&b, " (but %s stay read-only there: git commands that write to .git, such as add, commit, stash, checkout or fetch, fail)", protected.List())
	}
	if len(s.pol.Private) > 0 {
		fmt.Fprintf(&b, ". Besides them, %s look empty and are read-only here: use $TMPDIR", strings.Join(s.pol.Private, ", "))
	}
	b.WriteString(". ")
	switch {
	case s.client != nil:
		b.WriteString("The network goes through pid's proxy only, to the hosts the user allowed (a refused host is named above). ")
	case !s.pol.Network:
		b.WriteString("The network is off. ")
	}
	b.WriteString("If the command needs more, call bash again with unsandboxed: true and a justification; the user will be asked.]")
	return b.String()
}

// gitWord finds git run by a command.
var gitWord = regexp.MustCompile(`(^|[\s;&|(])git(\s|$)`)

// deniedPath finds the paths a line of output names: quoted ('...', ‘...’, "...") or a word
// starting with /.
var deniedPath = regexp.MustCompile(`'([^']+)'|‘([^’]+)’|"([^"]+)"|(/[^\s:'"]+)`)

// deniedOutside reports whether a line of output says "Permission denied" (any case) about a
// path outside pol's writable folders or inside a protected one, or "No such file or
// directory" about a path in a private place (/tmp...) that the command does not see;
// relative paths are taken from dir.
func deniedOutside(pol sandbox.Policy, dir, output string) bool {
	for line := range strings.Lines(output) {
		low := strings.ToLower(line)
		denied, missing := strings.Contains(low, "permission denied"), strings.Contains(low, "no such file or directory")
		if !denied && !missing {
			continue
		}
		for _, m := range deniedPath.FindAllStringSubmatch(line, -1) {
			p := m[1] + m[2] + m[3] + m[4]
			if p == "" || strings.ContainsAny(p, "\n\x00") {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			inside := func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }
			switch {
			case denied && (!slices.ContainsFunc(pol.Writable, inside) || slices.ContainsFunc(pol.Protected, inside)):
				return true
			case missing && slices.ContainsFunc(pol.Private, inside) && !slices.ContainsFunc(pol.Rebind, inside):
				return true
			}
		}
	}
	return false
}
