package shellcmd

// Tests of sed's script analyser (sed.go): a table of scripts, and a fuzz target that holds
// the analyser to GNU sed itself. GNU sed opens the files of w, W and s///w while it reads
// the script, before it reads any input: so a script the analyser calls harmless must leave
// the folder sed runs in empty when sed runs it on no input (e commands only run on input
// lines, so this oracle sees writes, not e; the table covers e).

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var sedScripts = []struct {
	script string
	risky  bool
}{
	{"p", false},
	{"1,10p", false},
	{"s/a/b/g", false},
	{"s/[0-9]/x/g", false},
	{"s|a|b|2p", false},
	{"/x/d;$!N", false},
	{"y/abc/xyz/", false},
	{"# a comment w out\np", false},
	{"a w out", false}, // the text of a, not a w command
	{"i\\\nw out", false},
	{":a;N;ba", false},
	{"\\%x%d", false},
	{"w out", true},
	{"W out", true},
	{"1w out", true},
	{"/x/ w out", true},
	{"s/a/b/w out", true},
	{"s/a/b/gw out", true},
	{"s/a/b/ w out", true},
	{"s/a/b/e", true},
	{"e ls", true},
	{"1e rm x", true},
	{"p;w out", true},
	{"{p;w out\n}", true},
	{"s/[/]/x/w f", true}, // GNU: the class ends at ], BSD: at /; risky either way
	{"s/a/b", true},       // unterminated: pid cannot read it
	{"q;w out", true},
	{"s/a/b/x", true}, // a flag pid does not know
}

func TestSedScriptRisky(t *testing.T) {
	for _, c := range sedScripts {
		if got := sedScriptRisky(c.script); got != c.risky {
			t.Errorf("sedScriptRisky(%q) = %v, want %v", c.script, got, c.risky)
		}
	}
}

// TestSedOracleSeesWrites shows that the oracle of FuzzSedScript catches a missed write:
// GNU sed creates the file of each w script of the table, on no input.
func TestSedOracleSeesWrites(t *testing.T) {
	if !requireGNUSed(t) {
		return
	}
	for _, c := range sedScripts {
		if strings.Contains(c.script, "w out") && !strings.HasPrefix(c.script, "#") && !strings.HasPrefix(c.script, "a ") && !strings.HasPrefix(c.script, "i\\") {
			if !gnuSedWrites(t, c.script) {
				t.Errorf("GNU sed wrote no file for %q: the oracle sees nothing", c.script)
			}
		}
	}
}

func FuzzSedScript(f *testing.F) {
	for _, c := range sedScripts {
		f.Add(c.script)
	}
	for _, s := range []string{"s,a,b,w x", "\\,x,w y", "s/\\//x/w z", "1~2w a", "$!{w b\n}", "y/a\\/b/xyz/w c"} {
		f.Add(s)
	}
	oracle := requireGNUSed(f)
	f.Fuzz(func(t *testing.T, script string) {
		risky := sedScriptRisky(script)
		if risky != (sedRisky(script, false) || sedRisky(script, true)) {
			t.Fatalf("%q: the two readings and their union disagree", script)
		}
		// The oracle runs only scripts whose file names stay in the folder it gives sed (no
		// slash: no absolute or parent path), that an argument can carry (no NUL), and
		// that the analyser calls harmless.
		if risky || !oracle || strings.ContainsAny(script, "/\x00") {
			return
		}
		if gnuSedWrites(t, script) {
			t.Fatalf("sedScriptRisky(%q) = false, but GNU sed opened a file for writing", script)
		}
	})
}

// gnuSedWrites runs GNU sed with script on no input in a fresh folder, and reports whether
// it left a file there.
func gnuSedWrites(t *testing.T, script string) bool {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sed", "-n", "-e", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	_ = cmd.Run() // a script sed rejects may still have opened the files before its error
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries) > 0
}

var gnuSed = sync.OnceValue(func() bool {
	out, err := exec.Command("sed", "--version").Output()
	return err == nil && strings.Contains(string(out), "GNU sed")
})

// requireGNUSed reports whether the sed on PATH is GNU sed's. On Linux it must be, or the
// oracle would be off without a word: it fails the test there instead.
func requireGNUSed(t testing.TB) bool {
	t.Helper()
	if gnuSed() {
		return true
	}
	if runtime.GOOS == "linux" {
		t.Fatal("these tests need GNU sed on PATH")
	}
	t.Log("no GNU sed here: the oracle (GNU sed's own reading) is off")
	return false
}
