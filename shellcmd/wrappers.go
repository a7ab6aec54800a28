// This file knows the wrappers that run another command (timeout, env, sudo, xargs, ...)
// and their options, reads the command behind them (command1, which hands the commands
// with risky options to options.go), the interpreters that take code in their arguments
// (python3 -c, node -e, awk), and the command lines run from strings (sh -c, eval, env -S).

package shellcmd

import (
	"path"
	"strings"
)

// wrapExtra is what scanning a wrapper's options found.
type wrapExtra struct {
	env         []string // NAME=VALUE assignments (env, sudo)
	options     bool     // env has options (then it stays a part of its own)
	firstOption int      // index of env's first option
	lookup      bool     // command -v / -V, taskset -p: a look-up (or a change) of something else, not a run
	write       *Word    // a file the wrapper writes (time -o)
	chdir       bool     // env -C
	split       *Word    // env -S STRING, flock -c STRING: a command line the wrapper runs
	splitBy     string   // "env -S" or "flock -c", for messages
	replace     string   // xargs -I STRING, -i, --replace
}

// wrapper describes a command that runs the command given in its arguments.
type wrapper struct {
	harmless   bool   // stripped before matching (timeout, nice, ...): rules see the command only
	unsafe     string // why no rule can allow it ("" when a rule can)
	dynTail    bool   // it appends arguments pid cannot see (xargs)
	opts       optSpec
	positional int  // operands before the command (timeout's duration)
	assigns    bool // NAME=VALUE words may come before the command (env, sudo)
}

// optSpec describes a command's options for scanning.
type optSpec struct {
	flags    string   // short options without a value
	values   string   // short options with a value, attached or in the next word
	attached string   // short options whose optional value can only be attached (-i.bak)
	long     []string // long options without a value (a value may still be attached with =)
	longVals []string // long options with a value (=VALUE or the next word)
	digits   bool     // -NUMBER is an option (nice -10)
}

// wrappers are the commands that run a command given in their arguments. Harmless ones
// are stripped before rules are matched (timeout 5 npm test is npm test); the others stay a
// part of their own, and the command they run is another part (sudo rm: both "sudo rm" and
// "rm" must be allowed, and a deny rule on rm sees it).
var wrappers = map[string]*wrapper{
	"timeout": {harmless: true, positional: 1, opts: optSpec{flags: "v", values: "ks",
		long: []string{"--preserve-status", "--foreground", "--verbose"}, longVals: []string{"--kill-after", "--signal"}}},
	"nice":    {harmless: true, opts: optSpec{values: "n", longVals: []string{"--adjustment"}, digits: true}},
	"nohup":   {harmless: true},
	"stdbuf":  {harmless: true, opts: optSpec{values: "ioe", longVals: []string{"--input", "--output", "--error"}}},
	"command": {harmless: true, opts: optSpec{flags: "pvV"}},
	"builtin": {harmless: true},
	"time": {harmless: true, opts: optSpec{flags: "pvaq", values: "fo",
		long: []string{"--portability", "--verbose", "--append", "--quiet"}, longVals: []string{"--format", "--output"}}},
	"env": {harmless: true, assigns: true, opts: optSpec{flags: "i0v", values: "uCS",
		long: []string{"--ignore-environment", "--null", "--debug"}, longVals: []string{"--unset", "--chdir", "--split-string"}}},
	"sudo": {assigns: true, opts: optSpec{flags: "AbEeHhiKklnPSsVv", values: "ugCDprtTUR",
		long: []string{"--askpass", "--background", "--preserve-env", "--edit", "--set-home", "--help", "--login",
			"--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups", "--stdin",
			"--shell", "--validate", "--version", "--bell"},
		longVals: []string{"--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type",
			"--command-timeout", "--other-user", "--chroot", "--host"}}},
	"doas": {opts: optSpec{flags: "nsL", values: "uC"}},
	"xargs": {dynTail: true, opts: optSpec{flags: "0prtx", values: "aEdILnPs", attached: "eil",
		long: []string{"--null", "--interactive", "--no-run-if-empty", "--verbose", "--exit", "--open-tty",
			"--show-limits", "--replace", "--eof", "--max-lines"},
		longVals: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}},
	"exec":     {unsafe: "replaces the shell", opts: optSpec{flags: "cl", values: "a"}},
	"setsid":   {opts: optSpec{flags: "cfw", long: []string{"--ctty", "--fork", "--wait"}}},
	"ionice":   {opts: optSpec{flags: "t", values: "cnpPu", long: []string{"--ignore"}, longVals: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}},
	"chroot":   {positional: 1, opts: optSpec{long: []string{"--skip-chdir"}, longVals: []string{"--userspec", "--groups"}}},
	"unbuffer": {opts: optSpec{flags: "p"}},
	// taskset [-acp] MASK COMMAND...: with -p it changes a running process and runs nothing.
	"taskset": {harmless: true, positional: 1, opts: optSpec{flags: "acpVh",
		long: []string{"--all-tasks", "--pid", "--cpu-list", "--help", "--version"}}},
	// flock [options] FILE COMMAND... or FILE -c STRING (STRING through sh -c); FILE is
	// created when missing: a write. flock NUMBER locks a descriptor and runs nothing.
	"flock": {harmless: true, positional: 1, opts: optSpec{flags: "sxenuoFhV", values: "wEc",
		long:     []string{"--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork", "--verbose", "--help", "--version"},
		longVals: []string{"--timeout", "--wait", "--conflict-exit-code", "--command"}}},
}

// scan reads a wrapper's options and returns the index of the command it runs (len(words)
// when none), whether every option was known, and what else it found.
func (w *wrapper) scan(words []Word) (start int, known bool, x wrapExtra) {
	base := path.Base(words[0].Text)
	i, known := scanOptions(words, 1, &w.opts, func(opt string, at int, val *Word) {
		switch base {
		case "command":
			x.lookup = x.lookup || opt == "-v" || opt == "-V"
		case "time":
			if (opt == "-o" || opt == "--output") && val != nil {
				x.write = val
			}
		case "xargs":
			switch {
			case (opt == "-I" || opt == "-i" || opt == "--replace") && val != nil:
				x.replace = val.Text
			case opt == "-i" || opt == "--replace":
				x.replace = "{}"
			}
		case "taskset":
			x.lookup = x.lookup || opt == "-p" || opt == "--pid"
		case "flock":
			if (opt == "-c" || opt == "--command") && val != nil {
				x.split, x.splitBy = val, "flock -c"
			}
		case "env":
			if !x.options {
				x.options, x.firstOption = true, at
			}
			switch {
			case (opt == "-C" || opt == "--chdir") && val != nil:
				x.chdir = true
			case (opt == "-S" || opt == "--split-string") && val != nil:
				x.split, x.splitBy = val, "env -S"
			}
		}
	})
	if !known {
		// Best effort for deny rules: the command is the first word after the options.
		for i < len(words) && words[i].Lit && strings.HasPrefix(words[i].Text, "-") {
			i++
		}
	}
	operand := i
	for n := 0; n < w.positional && i < len(words); n++ {
		i++
	}
	if base == "flock" && operand < len(words) {
		if i+1 < len(words) && words[i].Lit && (words[i].Text == "-c" || words[i].Text == "--command") {
			x.split, x.splitBy = &words[i+1], "flock -c"
		}
		if i < len(words) || x.split != nil {
			x.write = &words[operand] // FILE, created when missing (not a descriptor number)
		}
	}
	if w.assigns {
		for i < len(words) {
			name, ok := assignmentName(words[i])
			if !ok {
				break
			}
			x.env = append(x.env, name)
			i++
		}
	}
	if x.split != nil {
		return len(words), known, x // the string is the command
	}
	return i, known, x
}

// assignmentName returns NAME of a NAME=VALUE word.
func assignmentName(w Word) (string, bool) {
	if !w.Lit {
		return "", false
	}
	name, _, ok := strings.Cut(w.Text, "=")
	if !ok || name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return name, true
}

// scanOptions reads the options of words from index i and returns the index of the first
// operand, and whether every option was known and readable (when not, the index is that of
// the option it could not read). visit sees each option (as "-x" or "--long") with the
// index of its word and its value (nil when it has none).
func scanOptions(words []Word, i int, spec *optSpec, visit func(opt string, at int, val *Word)) (int, bool) {
	for i < len(words) {
		w := words[i]
		if !w.Lit {
			return i, false
		}
		switch t := w.Text; {
		case t == "--":
			return i + 1, true
		case t == "-" || !strings.HasPrefix(t, "-"):
			return i, true
		}
		next, ok := scanOption(words, i, spec, visit)
		if !ok {
			return i, false
		}
		i = next
	}
	return i, true
}

// scanOption reads the one option word words[i] (a cluster of short options, or a long
// option) and its value, and returns the index after them; ok is false for an option spec
// does not know or a value that is missing.
func scanOption(words []Word, i int, spec *optSpec, visit func(opt string, at int, val *Word)) (int, bool) {
	t := words[i].Text
	if strings.HasPrefix(t, "--") {
		name, val, hasVal := strings.Cut(t, "=")
		switch {
		case hasVal && (contains(spec.long, name) || contains(spec.longVals, name)):
			visit(name, i, &Word{Text: val, Lit: true})
		case contains(spec.long, name):
			visit(name, i, nil)
		case contains(spec.longVals, name) && i+1 < len(words):
			visit(name, i, &words[i+1])
			return i + 2, true
		default:
			return i, false
		}
		return i + 1, true
	}
	if spec.digits && isNumber(t[1:]) {
		visit(t, i, nil)
		return i + 1, true
	}
	for k := 1; k < len(t); k++ {
		c := t[k]
		opt := "-" + string(c)
		switch {
		case strings.IndexByte(spec.flags, c) >= 0:
			visit(opt, i, nil)
		case strings.IndexByte(spec.attached, c) >= 0:
			if rest := t[k+1:]; rest != "" {
				visit(opt, i, &Word{Text: rest, Lit: true})
			} else {
				visit(opt, i, nil)
			}
			return i + 1, true
		case strings.IndexByte(spec.values, c) >= 0:
			if rest := t[k+1:]; rest != "" {
				visit(opt, i, &Word{Text: rest, Lit: true})
				return i + 1, true
			}
			if i+1 >= len(words) {
				return i, false
			}
			visit(opt, i, &words[i+1])
			return i + 2, true
		default:
			return i, false
		}
	}
	return i + 1, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// command1 adds the part of a command that is not a wrapper (after the wrappers in front of
// it), reading the options pid knows for it, and returns first.
func (r *shellReader) command1(words []Word, vouch int, dynTail bool, first int) int {
	base := path.Base(words[0].Text)
	if why, ok := opaque[base]; ok {
		r.setUnsafe("the command uses " + base + ", which " + why)
		if base == "trap" && len(words) > 2 && words[1].Lit {
			r.nested(words[1].Text)
		}
		r.addPart(words, NoVouch)
		return first
	}
	switch {
	case shells[base]:
		r.setUnsafe("the command runs " + base + ", which runs commands pid does not see")
		r.addPart(words, NoVouch)
		if script, ok := shellScript(words); ok {
			r.nested(script)
		}
		return first
	case base == "eval" || base == "watch":
		// Both join their arguments into a command line for the shell.
		how := "eval, which runs a string as a command"
		args := words[1:]
		if base == "watch" {
			how = "watch, which runs its arguments through sh -c"
			spec := optSpec{flags: "bcdeghtpwrx", values: "nq", long: []string{"--beep", "--color", "--no-color",
				"--differences", "--errexit", "--chgexit", "--no-title", "--precise", "--no-wrap", "--exec", "--no-rerun"},
				longVals: []string{"--interval", "--equexit"}}
			i, _ := scanOptions(words, 1, &spec, func(string, int, *Word) {})
			args = words[i:]
		}
		r.setUnsafe("the command uses " + how)
		r.addPart(words, NoVouch)
		var b strings.Builder
		for i, w := range args {
			if !w.Lit {
				return first
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.Text)
		}
		r.nested(b.String())
		return first
	}
	idx := r.addPart(words, vouch)
	if in, ok := interpreterOf(base); ok {
		r.cmd.Parts[idx].Interp = true
		r.cmd.Parts[idx].Inline = in.inlineCode(words)
	}
	table := knownCommand(base)
	if table && dynTail {
		vouch = NoVouch // xargs adds arguments that could be options
	}
	switch base {
	case "git":
		var out []Word
		out, vouch = r.git(words, vouch)
		r.cmd.Parts[idx].Words = out
	case "find":
		vouch = r.find(words, vouch)
	case "sed":
		vouch = r.sed(words, vouch)
	case "sort":
		vouch = r.sort(words, vouch)
	case "tee":
		vouch = r.tee(words, vouch)
	case "cd", "pushd", "popd":
		r.cmd.cd = true
		r.chdir(base, words)
	case "printf", "read", "mapfile", "readarray", "unset", "test", "[", "getopts", "wait", "let":
		for _, w := range words[1:] {
			if w.Lit && subscriptTrick(w.Text) {
				r.setUnsafe("the command names a variable with a subscript bash evaluates")
			}
			if (base == "mapfile" || base == "readarray") && w.Lit && strings.HasPrefix(w.Text, "-") && strings.ContainsRune(w.Text, 'C') {
				r.setUnsafe("the command uses " + base + " -C, which runs a callback")
			}
		}
	}
	r.cmd.Parts[idx].Vouch = vouch
	return first
}

// interpreter says where an interpreter takes code in its arguments.
type interpreter struct {
	short   string   // one-letter options whose value is code (-c, -e), also in a cluster (-ne)
	long    []string // long options whose value is code (--eval)
	sub     string   // a subcommand whose argument is code (deno eval)
	program bool     // the first operand is the program, unless a file option gives it (awk)
	anyCase bool     // options start with -c or -e in any case, abbreviated (pwsh -Command)
}

// interpreters are the languages whose code can be given on the command line, by name
// without a version (python3.12 is python, perl5.36 perl, Rscript rscript).
var interpreters = map[string]interpreter{
	"python": {short: "c"}, "pypy": {short: "c"},
	"node": {short: "ep", long: []string{"--eval", "--print"}}, "nodejs": {short: "ep", long: []string{"--eval", "--print"}},
	"bun":  {short: "ep", long: []string{"--eval", "--print"}},
	"deno": {sub: "eval"},
	"perl": {short: "eE"}, "ruby": {short: "e"}, "php": {short: "rBRE"},
	"lua": {short: "e"}, "luajit": {short: "e"}, "julia": {short: "eE", long: []string{"--eval", "--print"}},
	"rscript": {short: "e"}, "r": {short: "e"}, "osascript": {short: "e"}, "expect": {short: "c"},
	"pwsh": {anyCase: true}, "powershell": {anyCase: true},
	"awk": {program: true, long: []string{"--source"}}, "gawk": {program: true, long: []string{"--source"}},
	"mawk": {program: true}, "nawk": {program: true},
}

// interpreterOf returns the interpreter a command name runs: lower case, without a
// trailing version (digits, dots and dashes).
func interpreterOf(base string) (interpreter, bool) {
	name := strings.TrimRight(strings.ToLower(base), "0123456789.-")
	in, ok := interpreters[name]
	return in, ok
}

// inlineCode reports whether words (an interpreter's command) give code in an argument.
// It errs towards yes: an option letter found anywhere counts, even after a script's name
// (where it is the script's), since yes only makes what an "always" answer covers
// narrower.
func (in interpreter) inlineCode(words []Word) bool {
	if in.sub != "" {
		return len(words) > 2 && words[1].Lit && words[1].Text == in.sub
	}
	operands := 0
	for j := 1; j < len(words); j++ {
		w := words[j]
		hasNext := j+1 < len(words)
		if !w.Lit {
			operands++
			continue
		}
		t := w.Text
		switch {
		case in.anyCase && len(t) > 1 && t[0] == '-' && strings.ContainsRune("ceCE", rune(t[1])):
			return hasNext
		case strings.HasPrefix(t, "--"):
			name, _, eq := strings.Cut(t, "=")
			if contains(in.long, name) && (eq || hasNext) {
				return true
			}
			if in.program && (name == "--file" || name == "--exec") {
				return false
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for k := 1; k < len(t); k++ {
				if strings.IndexByte(in.short, t[k]) >= 0 {
					if k+1 < len(t) || hasNext {
						return true
					}
				}
			}
			if in.program && (t[1] == 'f' || t == "-E") { // awk -f FILE, gawk -E FILE
				return false
			}
		default:
			operands++
		}
	}
	return in.program && operands > 0
}

// chdir records the folder a cd or pushd goes to (see Command.dirs).
func (r *shellReader) chdir(base string, words []Word) {
	if base == "popd" {
		r.cmd.dirUnknown = true
		return
	}
	for _, w := range words[1:] {
		switch {
		case !w.Lit || w.Glob:
			r.cmd.dirUnknown = true
			return
		case w.Text == "--":
			continue
		case strings.HasPrefix(w.Text, "-") && w.Text != "-" || base == "pushd" && strings.HasPrefix(w.Text, "+"):
			if base == "pushd" && w.Text != "-n" {
				r.cmd.dirUnknown = true // pushd -N / +N rotate the stack
				return
			}
			continue
		case w.Text == "-":
			r.cmd.dirUnknown = true
			return
		}
		r.cmd.dirs = append(r.cmd.dirs, w.Text)
		return
	}
	r.cmd.dirUnknown = true // cd alone goes home
}

// shellScript returns the script of `sh -c SCRIPT` (any option cluster with c).
func shellScript(words []Word) (string, bool) {
	c := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		if !w.Lit {
			return "", false
		}
		t := w.Text
		switch {
		case t == "--":
			if c && i+1 < len(words) && words[i+1].Lit {
				return words[i+1].Text, true
			}
			return "", false
		case t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file":
			i++
		case strings.HasPrefix(t, "--"):
		case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
			if t[0] == '-' && strings.ContainsRune(t, 'c') {
				c = true
			}
		default:
			return t, c
		}
	}
	return "", false
}

// nested reads a string that the command runs as a command line (eval, sh -c, env -S,
// trap): its parts join the command's, so that deny rules see them.
func (r *shellReader) nested(src string) {
	if r.depth+1 >= maxShellDepth {
		return
	}
	sub := &shellReader{cmd: r.cmd, src: src, depth: r.depth + 1}
	sub.run()
}
