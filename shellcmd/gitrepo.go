// This file reads the configuration of the git repository a git command would run in (the
// repository's own files, never the user's ~/.gitconfig) and reports the settings with
// which git runs a program the repository names: core.fsmonitor, core.pager,
// core.sshCommand, core.hooksPath, diff.*.textconv, filter.* drivers, "!" aliases, and the
// like. Workspace contents are untrusted input: every file is read through safefile (no
// blocking on a FIFO, a size cap), the walk up the folders and the includes are bounded,
// and what cannot be read or parsed counts as a risk. The policy (package permissions) uses
// Command.GitRisk so that no allow rule or remembered answer runs such a program without
// asking, and so that deny rules see the commands the repository would have git run.

package shellcmd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/safefile"
)

// gitConfigMax caps each repository configuration file pid reads (git's own are a few KB).
const gitConfigMax = 1 << 20

// gitMaxDepth bounds the walk from a folder up to its repository.
const gitMaxDepth = 64

// gitSetting is one setting of a repository's configuration that makes git run something.
type gitSetting struct {
	name  string // as a person reads it: "core.fsmonitor", "diff.pdf.textconv", "alias.x"
	value string
	file  string // the configuration file that sets it
}

// GitRisk is what a git command in a folder must not be allowed without asking.
type GitRisk struct {
	// Why says the first reason, for a person; "" when there is none.
	Why string
	// Commands are the command lines the risky settings name (values without a leading
	// "!"), for deny rules to see.
	Commands []string
}

// gitRisk returns what the repository a git command runs in would make it run: the
// repository holding dir (found as git finds it: dir/.git, a .git file pointing at the
// real folder, or a bare repository, in dir or a folder above), for the git subcommand
// sub (an alias of that name in the repository counts).
func gitRisk(dir, sub string) GitRisk {
	gitDir, why := findGitDir(dir)
	if why != "" {
		return GitRisk{Why: why}
	}
	if gitDir == "" {
		return GitRisk{}
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if data, err := safefile.Read(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return GitRisk{Why: "pid cannot read " + filepath.Join(gitDir, "commondir") + " to check what git would run (" + err.Error() + ")"}
	}
	var risk GitRisk
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// git would follow it; pid reads no file a workspace points it at.
			return GitRisk{Why: "the repository's configuration " + f + " is a symbolic link, which pid does not follow to check what git would run"}
		}
		data, err := safefile.Read(f, gitConfigMax)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return GitRisk{Why: "pid cannot read the repository's configuration " + f + " to check what git would run (" + err.Error() + ")"}
		}
		settings, perr := riskyGitSettings(string(data), f, sub)
		if perr != "" {
			return GitRisk{Why: "pid cannot read the repository's configuration " + f + " (" + perr + "), so it cannot check what git would run"}
		}
		for _, s := range settings {
			if risk.Why == "" {
				risk.Why = "the repository's configuration (" + s.file + ") sets " + s.name + ", which makes git run a program"
			}
			if v := strings.TrimPrefix(strings.TrimSpace(s.value), "!"); strings.TrimSpace(v) != "" && !gitBool(v) {
				risk.Commands = append(risk.Commands, v)
			}
		}
	}
	return risk
}

// findGitDir returns the git folder of the repository holding dir, or "" when there is
// none, as git looks for it: in dir and each folder above, a .git folder, a .git file
// ("gitdir: PATH"), or the folder itself being a bare repository. why is set when pid
// cannot tell (a .git it cannot read).
func findGitDir(dir string) (gitDir, why string) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", ""
	}
	d := filepath.Clean(dir)
	for range gitMaxDepth {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return dotGit, ""
		case err == nil && fi.Mode().IsRegular():
			data, err := safefile.Read(dotGit, 4096)
			if err != nil {
				return "", "pid cannot read " + dotGit + " to check what git would run (" + err.Error() + ")"
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return "", "" // git ignores a .git file it cannot read as one, and fails
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return target, ""
		case err == nil:
			return "", dotGit + " is " + kindOfMode(fi.Mode()) + ", which pid cannot check"
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission):
			return "", "pid cannot look at " + dotGit + " (" + err.Error() + ")"
		}
		if bareRepository(d) {
			return d, ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
	return "", "the folder is nested too deeply for pid to find its repository"
}

// kindOfMode names what a file that is neither a folder nor a regular file is.
func kindOfMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// bareRepository reports whether d looks like a git folder to git (HEAD, objects/ and
// refs/): git then uses it as a bare repository, with d/config as its configuration.
func bareRepository(d string) bool {
	for _, name := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, name)); err != nil || !fi.IsDir() {
			return false
		}
	}
	fi, err := os.Stat(filepath.Join(d, "HEAD"))
	return err == nil && fi.Mode().IsRegular()
}

// gitBool reports whether a value is one of git's booleans (a setting such as
// core.fsmonitor = false, or pager.log = true, names no program).
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return true
	}
	return false
}

// riskyGitSettings parses a git configuration file and returns its settings that make git
// run a program (see gitRiskyKey); an alias counts only when it is sub's. problem is set
// when the text is not something pid can read as git does.
func riskyGitSettings(text, file, sub string) (out []gitSetting, problem string) {
	err := parseGitConfig(text, func(section, subsection, key, value string) {
		name := section + "." + key
		if subsection != "" {
			name = section + "." + subsection + "." + key
		}
		isAlias := section == "alias" && (subsection == "" && key == strings.ToLower(sub) ||
			subsection == sub && sub != "")
		if isAlias || gitRiskyKey(section, subsection, key, value) {
			out = append(out, gitSetting{name: name, value: value, file: file})
		}
	})
	if err != "" {
		return nil, err
	}
	return out, ""
}

// gitRiskyKey reports whether a setting (section and key in lower case, subsection as
// written) names a program git runs, a file of more settings, or a folder of hooks.
func gitRiskyKey(section, subsection, key, value string) bool {
	sub := subsection != ""
	switch section {
	case "core":
		switch key {
		case "fsmonitor":
			return !gitBool(value)
		case "pager", "sshcommand", "hookspath", "editor", "askpass", "gitproxy", "alternaterefscommand":
			return true
		}
	case "pager":
		return !sub && !gitBool(value)
	case "diff":
		return key == "external" || sub && (key == "textconv" || key == "command")
	case "filter":
		return true // clean, smudge, process: programs run on checkout, add and status
	case "merge":
		return sub && key == "driver"
	case "sequence", "interactive":
		return key == "editor" || key == "difffilter"
	case "credential":
		return key == "helper"
	case "gpg":
		return key == "program"
	case "uploadpack":
		return key == "packobjectshook"
	case "remote":
		return sub && (key == "uploadpack" || key == "receivepack" || key == "vcs")
	case "protocol":
		return key == "allow" && !strings.EqualFold(value, "never")
	case "include", "includeif":
		return key == "path"
	case "difftool", "mergetool", "man", "browser":
		return sub && (key == "cmd" || key == "path")
	case "web":
		return key == "browser"
	case "sendemail":
		return key == "smtpserver" || key == "tocmd" || key == "cccmd" || key == "sendmailcmd"
	case "hook", "trailer":
		return sub && (key == "command" || key == "cmd")
	case "submodule":
		return sub && key == "update" && strings.HasPrefix(strings.TrimSpace(value), "!")
	}
	return false
}

// parseGitConfig reads a git configuration file as git does (sections "[name]",
// "[name \"sub\"]" and "[name.sub]", variables "key = value" or "key" alone, on the
// header's line too, quotes, escapes, comments and continuation lines) and calls set for
// each variable, with section and key in lower case. It returns a problem for text git
// would refuse or that pid does not read the same way.
func parseGitConfig(text string, set func(section, subsection, key, value string)) string {
	i := 0
	section, subsection := "", ""
	text = strings.TrimPrefix(text, "\ufeff")
	for i < len(text) {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '[':
			end := strings.IndexByte(text[i:], ']')
			if end < 0 {
				return "a section header has no ]"
			}
			h := text[i+1 : i+end]
			// A quoted subsection may hold "]": find the real end.
			if q := strings.IndexByte(h, '"'); q >= 0 {
				j := i + 1 + q + 1
				for j < len(text) && text[j] != '"' {
					if text[j] == '\\' {
						j++
					}
					if j < len(text) && text[j] == '\n' {
						return "a section header spans lines"
					}
					j++
				}
				if j+1 >= len(text) || text[j+1] != ']' {
					return "a section header is not closed after its quoted name"
				}
				name := strings.TrimSpace(text[i+1 : i+1+q])
				if !gitName(name) {
					return "a section name has characters git does not allow"
				}
				section = strings.ToLower(name)
				subsection = unescapeGitSub(text[i+1+q+1 : j])
				i = j + 2
				continue
			}
			if strings.ContainsAny(h, "\n") {
				return "a section header spans lines"
			}
			name, dotted, hasDot := strings.Cut(h, ".")
			if !gitName(name) || hasDot && !gitName(dotted) {
				return "a section name has characters git does not allow"
			}
			section, subsection = strings.ToLower(name), ""
			if hasDot {
				subsection = strings.ToLower(dotted) // the old [section.sub] form is case-insensitive
			}
			i += end + 1
		case isGitAlpha(c): // (before any section, git reads a variable with no section)
			j := i
			for j < len(text) && (isGitAlpha(text[j]) || text[j] >= '0' && text[j] <= '9' || text[j] == '-') {
				j++
			}
			key := strings.ToLower(text[i:j])
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			if j >= len(text) || text[j] == '\n' || text[j] == '\r' || text[j] == '#' || text[j] == ';' {
				set(section, subsection, key, "") // a key alone is true
				i = j
				continue
			}
			if text[j] != '=' {
				return "a variable name has characters git does not allow"
			}
			value, next, problem := gitValue(text, j+1)
			if problem != "" {
				return problem
			}
			set(section, subsection, key, value)
			i = next
		default:
			return "a line starts with a character git does not allow"
		}
	}
	return ""
}

// gitValue reads a value from text[i:] to its end of line (continuation lines joined) and
// returns it and where the next line starts.
func gitValue(text string, i int) (string, int, string) {
	var b strings.Builder
	quoted := false
	pendingSpace := ""
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\n' && !quoted:
			return b.String(), i + 1, ""
		case c == '\n':
			return "", 0, "a quoted value runs past its line"
		case (c == '#' || c == ';') && !quoted:
			for i < len(text) && text[i] != '\n' {
				i++
			}
			return b.String(), i, ""
		case c == '"':
			quoted = !quoted
			b.WriteString(pendingSpace)
			pendingSpace = ""
		case c == '\\':
			if i+1 >= len(text) {
				return "", 0, "a value ends with a backslash"
			}
			i++
			switch e := text[i]; e {
			case '\n':
			case '\r':
				if i+1 < len(text) && text[i+1] == '\n' {
					i++
				}
			case 'n':
				b.WriteString(pendingSpace + "\n")
				pendingSpace = ""
			case 't':
				b.WriteString(pendingSpace + "\t")
				pendingSpace = ""
			case 'b':
				b.WriteString(pendingSpace + "\b")
				pendingSpace = ""
			case '"', '\\':
				b.WriteString(pendingSpace + string(e))
				pendingSpace = ""
			default:
				return "", 0, "a value has an escape git does not allow"
			}
		case (c == ' ' || c == '\t' || c == '\r') && !quoted:
			if b.Len() > 0 {
				pendingSpace += string(c)
			}
		default:
			b.WriteString(pendingSpace)
			pendingSpace = ""
			b.WriteByte(c)
		}
		i++
	}
	if quoted {
		return "", 0, "a quoted value is not closed"
	}
	return b.String(), i, ""
}

// unescapeGitSub returns a quoted subsection name without its escapes.
func unescapeGitSub(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isGitAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// gitName reports whether s is a section name git accepts (letters, digits, - and .).
func gitName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isGitAlpha(c) || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// GitRisk returns what the repositories the git commands of sc run in would make git run:
// for each simple command that runs git, the repository of cwd (the folder the command
// runs in) and of each folder the command changes to (a folder pid cannot tell is itself a
// risk). A command without git, or a nil one, has none.
//
// Contract: safe for concurrent use; it reads only the repositories' own configuration
// files, through safefile (no FIFO wait, 1 MB each), and never blocks for long.
func (sc *Command) GitRisk(cwd string) GitRisk {
	if sc == nil {
		return GitRisk{}
	}
	var risk GitRisk
	for i := range sc.Parts {
		pt := &sc.Parts[i]
		if len(pt.Words) == 0 || !pt.Words[0].Lit || !strings.EqualFold(filepath.Base(pt.Words[0].Text), "git") {
			continue
		}
		if sc.dirUnknown {
			return GitRisk{Why: "the command changes folder before running git, and pid cannot tell to which folder, so it cannot check that repository's configuration"}
		}
		sub := ""
		if len(pt.Words) > 1 && pt.Words[1].Lit {
			sub = pt.Words[1].Text
		}
		dirs := []string{cwd}
		cur := cwd
		for _, d := range sc.dirs {
			if !filepath.IsAbs(d) {
				// Relative to the call's folder, or to the folder an earlier cd went to.
				dirs = append(dirs, filepath.Join(cwd, d))
				d = filepath.Join(cur, d)
			}
			cur = d
			dirs = append(dirs, d)
		}
		for _, d := range dirs {
			r := gitRisk(d, sub)
			if risk.Why == "" {
				risk.Why = r.Why
			}
			risk.Commands = append(risk.Commands, r.Commands...)
		}
	}
	return risk
}
