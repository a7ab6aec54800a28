// This file knows the options that make a command write files or run other commands (git,
// find, sed, sort, tee, ...): an allow rule must name them. docs/permissions.md shows the
// same table. sed, whose scripts are a language of their own, is read in sed.go.

package shellcmd

import (
	"strings"
)

// risk is what a known option does.
type risk int

const (
	// riskWrite: the option's value is a file the command writes; it is decided as a write
	// call on that path.
	riskWrite risk = iota
	// riskAsk: the option writes or runs something pid cannot check; an allow rule must name
	// the option itself (a rule "sed" does not allow "sed -i", a rule "sed -i" does).
	riskAsk
	// riskRun: the option asks as riskAsk does, and the words after it are a command of its
	// own: deny rules see it.
	riskRun
)

// optionRisk is one row of commandOptions.
type optionRisk struct {
	Command string // the command's name
	Sub     string // for git: "global" (before the subcommand), a subcommand, or "" for any
	Option  string // the option, without its value
	Risk    risk
	What    string // what the option does, for a person
}

// commandOptions lists the options pid knows write files or run other commands, for the
// commands the defaults and docs name (docs/permissions.md shows the same list). An allow
// rule on such a command does not allow these options unless it names them. Besides these:
// an expansion or glob in the arguments of git, find, sed, sort or tee asks (it could turn
// into any option), tee's file operands are writes, and the commands that xargs, env,
// sudo, doas, nice, timeout, ... run are parts of their own.
var commandOptions = []optionRisk{
	{"git", "global", "-c", riskAsk, "sets configuration, which can name programs git runs (core.pager, core.fsmonitor, ...)"},
	{"git", "global", "--config-env", riskAsk, "sets configuration from the environment"},
	{"git", "global", "--exec-path", riskAsk, "changes where git finds its programs"},
	{"git", "global", "-C", riskAsk, "works in another repository, whose configuration can run programs"},
	{"git", "global", "--git-dir", riskAsk, "works in another repository"},
	{"git", "global", "--work-tree", riskAsk, "works in another repository"},
	{"git", "global", "--namespace", riskAsk, "works in another namespace"},
	{"git", "global", "--bare", riskAsk, "treats the folder as a bare repository"},
	{"git", "global", "--super-prefix", riskAsk, "internal option"},
	{"git", "", "--output", riskWrite, "writes the output to a file"},
	{"git", "", "--ext-diff", riskAsk, "runs an external diff program"},
	{"git", "", "--exec", riskAsk, "runs a command"},
	{"git", "", "--upload-pack", riskAsk, "runs a command"},
	{"git", "", "--receive-pack", riskAsk, "runs a command"},
	{"git", "", "--extcmd", riskAsk, "runs a command (difftool)"},
	{"git", "", "--open-files-in-pager", riskAsk, "runs a pager or command (grep)"},
	{"git", "", "--template", riskAsk, "copies hooks from a template folder"},
	{"git", "", "--config", riskAsk, "sets configuration (clone)"},
	{"git", "", "--output-directory", riskAsk, "writes files to a folder (format-patch)"},
	{"git", "rebase", "-x", riskAsk, "runs a command after each commit"},
	{"git", "grep", "-O", riskAsk, "runs a pager or command"},
	{"git", "clone", "-c", riskAsk, "sets configuration"},
	{"git", "clone", "-u", riskAsk, "runs a command as upload-pack"},
	{"git", "format-patch", "-o", riskAsk, "writes files to a folder"},
	{"find", "", "-exec", riskRun, "runs a command for each file"},
	{"find", "", "-execdir", riskRun, "runs a command for each file"},
	{"find", "", "-ok", riskRun, "runs a command for each file"},
	{"find", "", "-okdir", riskRun, "runs a command for each file"},
	{"find", "", "-delete", riskAsk, "deletes the files found"},
	{"find", "", "-fprint", riskAsk, "writes to a file"},
	{"find", "", "-fprint0", riskAsk, "writes to a file"},
	{"find", "", "-fprintf", riskAsk, "writes to a file"},
	{"find", "", "-fls", riskAsk, "writes to a file"},
	{"sed", "", "-i", riskAsk, "edits files in place"},
	{"sed", "", "-I", riskAsk, "edits files in place"},
	{"sed", "", "--in-place", riskAsk, "edits files in place"},
	{"sed", "", "-f", riskAsk, "reads a script pid does not see (unless --sandbox)"},
	{"sed", "", "--file", riskAsk, "reads a script pid does not see (unless --sandbox)"},
	{"sed", "", "w/W/e in the script", riskAsk, "the script writes files or runs commands (w, W, e, s///w, s///e; unless --sandbox)"},
	{"sort", "", "-o", riskWrite, "writes the output to a file"},
	{"sort", "", "--output", riskWrite, "writes the output to a file"},
	{"sort", "", "--compress-program", riskAsk, "runs a program"},
	{"tee", "", "FILE", riskWrite, "writes each file operand"},
	{"time", "", "-o", riskWrite, "writes the timing to a file"},
	{"xargs", "", "COMMAND", riskRun, "runs its command with arguments read from its input; the command is a part of its own, and for git, find, sed, sort and tee it asks"},
	{"env", "", "COMMAND", riskRun, "runs its command: env NAME=VALUE... is stripped, env with options stays a part of its own"},
	{"env", "", "-S", riskAsk, "runs a command line given as a string"},
	{"env", "", "-C", riskAsk, "changes folder before running the command"},
}

// optionIndex maps "command sub option" to a row of commandOptions.
var optionIndex = func() map[string]optionRisk {
	m := make(map[string]optionRisk, len(commandOptions))
	for _, o := range commandOptions {
		m[o.Command+" "+o.Sub+" "+o.Option] = o
	}
	return m
}()

// knownCommand reports whether pid reads a command's options (an expansion among its
// arguments then asks).
func knownCommand(base string) bool {
	switch base {
	case "git", "find", "sed", "sort", "tee":
		return true
	}
	return false
}

// optionOf returns the row of an option of a command (sub "" for any subcommand).
func optionOf(command, sub, option string) (optionRisk, bool) {
	if sub != "" {
		if o, ok := optionIndex[command+" "+sub+" "+option]; ok {
			return o, true
		}
		if sub == "global" {
			return optionRisk{}, false
		}
	}
	o, ok := optionIndex[command+"  "+option]
	return o, ok
}

// gitHarmlessGlobal are git's global options that change nothing about what git runs;
// they are dropped from a git command's words, so that "git --no-pager push" is "git push"
// for rules.
var gitHarmlessGlobal = map[string]bool{
	"--no-pager": true, "-P": true, "-p": true, "--paginate": true, "--no-optional-locks": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true,
	"--icase-pathspecs": true, "--no-replace-objects": true, "--no-lazy-fetch": true, "--no-advice": true,
}

// gitGlobalValue are git's global options that take a value in the next word.
var gitGlobalValue = map[string]bool{
	"-c": true, "-C": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--config-env": true, "--super-prefix": true, "--attr-source": true, "--list-cmds": true,
}

// git reads a git command: global options (harmless ones dropped, the others ask), then
// the subcommand's options. It returns the words for rules and the vouch.
func (r *shellReader) git(words []Word, vouch int) ([]Word, int) {
	out := []Word{words[0]}
	i := 1
	for ; i < len(words); i++ {
		w := words[i]
		if !w.Lit || w.Glob {
			vouch = NoVouch
			break
		}
		t := w.Text
		if !strings.HasPrefix(t, "-") || gitInfo[t] {
			break // the subcommand, or --version and the like, which stand for one
		}
		if gitHarmlessGlobal[t] {
			continue
		}
		// Every other global option changes where git reads its configuration or its
		// programs (commandOptions), or is one pid does not know: no rule allows it.
		vouch = NoVouch
		if t == "-c" && i+1 < len(words) {
			r.gitConfigValue(words[i+1])
		}
		if name, _, hasEq := strings.Cut(t, "="); gitGlobalValue[name] && !hasEq {
			i++
		}
	}
	out = append(out, words[min(i, len(words)):]...)
	if len(out) < 2 {
		return out, vouch
	}
	sub := ""
	if out[1].Lit && !out[1].Glob {
		sub = out[1].Text
	} else {
		vouch = NoVouch
	}
	for j := 2; j < len(out); j++ {
		w := out[j]
		if !w.Lit || w.Glob {
			raise(&vouch, j+1)
			continue
		}
		t := w.Text
		if t == "--" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		name, val, hasEq := strings.Cut(t, "=")
		o, ok := optionOf("git", sub, name)
		if !ok && !strings.HasPrefix(t, "--") && len(t) > 2 {
			o, ok = optionOf("git", sub, t[:2]) // -Ocmd, -xcmd
		}
		if !ok {
			continue
		}
		if o.Risk != riskWrite {
			raise(&vouch, j+1)
			continue
		}
		if hasEq {
			r.addWrite(Word{Text: val, Lit: true})
		} else if j+1 < len(out) {
			r.addWrite(out[j+1])
			j++
		}
	}
	r.gitRuns(sub, out, &vouch)
	return out, vouch
}

// gitRuns reads the git subcommands that run a command given in their arguments: git
// submodule foreach CMD (through the shell, like sh -c: never allowed, deny rules see it)
// and git bisect run CMD ARGS (a part of its own, like find -exec).
func (r *shellReader) gitRuns(sub string, out []Word, vouch *int) {
	switch {
	case sub == "submodule":
		for k := 2; k < len(out); k++ {
			if out[k].Lit && out[k].Text == "foreach" {
				r.setUnsafe("the command uses git submodule foreach, which runs a command line through the shell")
				*vouch = NoVouch
				var b strings.Builder
				for _, w := range out[k+1:] {
					if !w.Lit {
						return
					}
					if strings.HasPrefix(w.Text, "-") && b.Len() == 0 {
						continue // --recursive, --quiet
					}
					if b.Len() > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(w.Text)
				}
				r.nested(b.String())
				return
			}
		}
	case sub == "bisect" && len(out) > 3 && out[2].Lit && out[2].Text == "run":
		raise(vouch, 3)
		r.simple(out[3:], nil, false)
	}
}

// gitConfigValue reads the value of git's -c NAME=VALUE as a command line, so that deny
// rules see what it may run: many settings name a program git runs through the shell
// (core.fsmonitor, core.pager, core.sshCommand, diff.*.textconv, filter.*.clean, an alias
// "!cmd", ...), and pid does not try to tell them from the others. A leading "!" (an alias
// that runs a shell command) is dropped.
func (r *shellReader) gitConfigValue(w Word) {
	if !w.Lit {
		return
	}
	_, v, ok := strings.Cut(w.Text, "=")
	v = strings.TrimPrefix(strings.TrimLeft(v, " \t"), "!")
	if ok && strings.TrimSpace(v) != "" {
		r.nested(v)
	}
}

// gitInfo are git's options that print something and stand in place of a subcommand.
var gitInfo = map[string]bool{
	"--version": true, "-v": true, "--help": true, "-h": true, "--html-path": true,
	"--man-path": true, "--info-path": true,
}

// find reads a find command: -exec and friends run a command (a part of its own), -delete
// and -fprint* write.
func (r *shellReader) find(words []Word, vouch int) int {
	for j := 1; j < len(words); j++ {
		w := words[j]
		if !w.Lit || w.Glob {
			raise(&vouch, j+1)
			continue
		}
		o, ok := optionOf("find", "", w.Text)
		if !ok {
			continue
		}
		raise(&vouch, j+1)
		if o.Risk == riskRun {
			end := j + 1
			for end < len(words) && !(words[end].Lit && (words[end].Text == ";" || words[end].Text == "+")) {
				end++
			}
			if end > j+1 {
				r.simple(replaced(words[j+1:end], "{}"), nil, false)
			}
			j = end
		}
	}
	return vouch
}

// sort reads a sort command: -o/--output are writes, --compress-program runs a program.
func (r *shellReader) sort(words []Word, vouch int) int {
	spec := optSpec{flags: "bdfgiMhnRrVcCmsuz", values: "kStTo",
		long: []string{"--ignore-leading-blanks", "--dictionary-order", "--ignore-case", "--general-numeric-sort",
			"--ignore-nonprinting", "--month-sort", "--human-numeric-sort", "--numeric-sort", "--random-sort",
			"--reverse", "--version-sort", "--check", "--merge", "--stable", "--unique", "--zero-terminated", "--debug"},
		longVals: []string{"--output", "--compress-program", "--files0-from", "--key", "--field-separator",
			"--buffer-size", "--temporary-directory", "--parallel", "--random-source", "--sort", "--batch-size"}}
	return r.operandsAfter(words, vouch, "sort", &spec, false)
}

// tee reads a tee command: each file operand is a write.
func (r *shellReader) tee(words []Word, vouch int) int {
	spec := optSpec{flags: "aip", long: []string{"--append", "--ignore-interrupts", "--output-error"}}
	return r.operandsAfter(words, vouch, "tee", &spec, true)
}

// operandsAfter reads the options and operands (which may be mixed) of sort or tee: the
// write options are writes (and every operand when operandsWrite), the other options of
// commandOptions and options pid does not know ask.
func (r *shellReader) operandsAfter(words []Word, vouch int, cmd string, spec *optSpec, operandsWrite bool) int {
	endOfOptions := false
	for i := 1; i < len(words); {
		w := words[i]
		if endOfOptions || !w.Lit || w.Text == "-" || !strings.HasPrefix(w.Text, "-") {
			if !w.Lit || w.Glob {
				raise(&vouch, i+1)
			}
			if operandsWrite {
				r.addWrite(w)
			}
			i++
			continue
		}
		if w.Text == "--" {
			endOfOptions = true
			i++
			continue
		}
		next, ok := scanOption(words, i, spec, func(opt string, at int, val *Word) {
			o, known := optionOf(cmd, "", opt)
			switch {
			case !known:
			case o.Risk == riskWrite && val != nil:
				r.addWrite(*val)
			default:
				raise(&vouch, at+1)
			}
		})
		if !ok {
			raise(&vouch, i+1)
			next = i + 1
		}
		i = next
	}
	return vouch
}
