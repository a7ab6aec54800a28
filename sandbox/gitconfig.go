// This file reads what a repository's git configuration makes git load or run from the
// workspace: the folder core.hooksPath names, the files include.path and includeIf.*.path
// pull in, and the programs of the keys that run one (core.fsmonitor, filters, diff and
// merge drivers...) when they name a file by its path. The Guard keeps those paths
// unchangeable as it does .git itself.

package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// gitRepo is one repository found in the workspace: where its .git entry is, and the folders
// git reads it from.
type gitRepo struct {
	entry   string // the .git entry (a folder, or a file "gitdir: PATH")
	gitDir  string // the folder the entry names ("" when it names none that exists)
	common  string // gitDir's commondir (gitDir itself when it has none)
	workTop string // the working tree's top: the entry's folder
}

// readRepo returns the repository of the .git entry at entry.
func readRepo(entry string) gitRepo {
	r := gitRepo{entry: entry, workTop: filepath.Dir(entry)}
	fi, err := os.Stat(entry) // a link to a folder is what git follows too
	switch {
	case err != nil:
		return r
	case fi.IsDir():
		r.gitDir = entry
	default:
		b, err := readSmall(entry, 4096)
		if err != nil {
			return r
		}
		line, _, _ := strings.Cut(string(b), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return r
		}
		r.gitDir = absFrom(filepath.Dir(entry), strings.TrimSpace(p))
	}
	r.common = r.gitDir
	if b, err := readSmall(filepath.Join(r.gitDir, "commondir"), 4096); err == nil {
		if c := strings.TrimSpace(string(b)); c != "" {
			r.common = absFrom(r.gitDir, c)
		}
	}
	return r
}

// configPaths returns the paths r's configuration makes git load or run from, absolute and
// cleaned: core.hooksPath, the included files (followed, a few levels deep) and the
// programs named by path. Missing files count: a command could create them.
func (r gitRepo) configPaths(home string) []string {
	if r.gitDir == "" {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var read func(file string, depth int)
	read = func(file string, depth int) {
		if depth > 5 || seen[file] {
			return
		}
		seen[file] = true
		b, err := readSmall(file, 1<<20)
		if err != nil {
			return
		}
		for _, kv := range parseGitConfig(b) {
			key, val := kv[0], kv[1]
			switch {
			case key == "core.hookspath":
				if p := expandGitPath(val, r.workTop, home); p != "" {
					out = append(out, p)
				}
			case key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"):
				if p := expandGitPath(val, filepath.Dir(file), home); p != "" {
					out = append(out, p)
					read(p, depth+1)
				}
			case runsProgram(key):
				if p := programPath(val, r.workTop, home); p != "" {
					out = append(out, p)
				}
			}
		}
	}
	read(filepath.Join(r.common, "config"), 0)
	read(filepath.Join(r.gitDir, "config.worktree"), 0)
	if r.common != r.gitDir {
		read(filepath.Join(r.common, "config.worktree"), 0)
	}
	return out
}

// runsProgram reports whether the (lower-case) key names a program git runs.
func runsProgram(key string) bool {
	switch key {
	case "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass",
		"sequence.editor", "diff.external", "credential.helper", "gpg.program", "pager.log", "pager.diff":
		return true
	}
	for _, suffix := range []string{".clean", ".smudge", ".process", ".textconv", ".command", ".driver", ".program", ".helper", ".cmd"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// programPath returns the file a command value runs when its first word is a path (it holds
// a slash): relative to the working tree's top, as git runs it there. "" otherwise (a
// program found on PATH, a boolean).
func programPath(val, top, home string) string {
	val = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(val), "!"))
	word, _, _ := strings.Cut(val, " ")
	word = strings.Trim(word, `"'`)
	if !strings.Contains(word, "/") {
		return ""
	}
	return expandGitPath(word, top, home)
}

// expandGitPath returns a path value of git's configuration made absolute: ~/ is home,
// a relative path is taken from base.
func expandGitPath(p, base, home string) string {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, p[2:])
	case strings.HasPrefix(p, "~"):
		return "" // another user's home: never in the workspace's writable places
	}
	return absFrom(base, p)
}

// absFrom returns p, made absolute from base when relative, cleaned.
func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readSmall reads a file, at most limit bytes of it.
func readSmall(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// parseGitConfig returns the key-value pairs of a git configuration file, keys as
// "section.key" or "section.subsection.key", section and key lower-case (as git compares
// them), subsections as written. Values are unquoted and unescaped as git does; a key
// without "=" is "true". What cannot be read is skipped: this reader only looks for paths.
func parseGitConfig(b []byte) [][2]string {
	var out [][2]string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var pending string // a value line continued with a trailing backslash
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending = strings.TrimSuffix(line, "\\")
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			end := strings.LastIndexByte(t, ']')
			if end < 0 {
				continue
			}
			head := strings.TrimSpace(t[1:end])
			if name, sub, ok := strings.Cut(head, " "); ok {
				section = strings.ToLower(name) + "." + strings.Trim(strings.TrimSpace(sub), `"`)
			} else if name, sub, ok := strings.Cut(head, "."); ok {
				section = strings.ToLower(name) + "." + strings.ToLower(sub)
			} else {
				section = strings.ToLower(head)
			}
			t = strings.TrimSpace(t[end+1:])
			if t == "" || t[0] == '#' || t[0] == ';' {
				continue
			}
		}
		k, v, hasValue := strings.Cut(t, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(k))
		if !hasValue {
			out = append(out, [2]string{key, "true"})
			continue
		}
		out = append(out, [2]string{key, gitValue(v)})
	}
	return out
}

// gitValue unquotes a configuration value: double quotes removed, \" \\ \n \t undone, a
// comment (# or ;) outside quotes ending it, spaces around trimmed.
func gitValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
