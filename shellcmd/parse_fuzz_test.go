package shellcmd_test

// The fuzz target of the reader on its own: no panic on any input, the same reading twice,
// the cache giving what a fresh parse gives, and a command that does not parse always
// unsafe. The decisions a policy takes on the result are fuzzed in package permissions
// (FuzzShellRules, whose seeds are the corpus of bypasses).

import (
	"slices"
	"testing"

	"github.com/pid-agent/pid/shellcmd"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"ls -la", "r''m -rf x", "ls; rm x", "echo $(rm x)", "find . -exec rm {} \\;",
		"eval \"rm x\"", "cat <<EOF > docs/x\n$(rm y)\nEOF", "git -c a=b push", "xargs -I{} {}",
		"sed 's/[/]/x/w f' y", "echo {a,b}$((1+x))", "npm test && npm run lint", "cd a && git status",
		"env -S 'rm x'", "timeout 5 sudo -u u nice rm x", "python3 -c 'import os'", "a=$(b) c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c := shellcmd.Parse(src)
		again := shellcmd.Parse(src)
		if !slices.Equal(texts(c), texts(again)) || !slices.Equal(c.Writes, again.Writes) || c.Unsafe != again.Unsafe || c.Canon != again.Canon {
			t.Fatalf("%q: two readings differ", src)
		}
		cached := shellcmd.ParseCached(src)
		if !slices.Equal(texts(c), texts(cached)) || c.Unsafe != cached.Unsafe || c.Canon != cached.Canon {
			t.Fatalf("%q: the cached reading differs from a fresh one", src)
		}
		if c.ParseErr != "" && c.Unsafe == "" {
			t.Fatalf("%q: does not parse (%s) but is not unsafe", src, c.ParseErr)
		}
		if s, ok := shellcmd.SuggestScope(c); ok && shellcmd.CompilePattern(s.Pattern).Problem() != "" {
			t.Fatalf("%q: scope %q is a pattern that matches nothing", src, s.Pattern)
		}
	})
}
