package shellcmd

// parseGitConfig reads a configuration file as git does: the same variables, with the same
// values, and a refusal where git refuses. git itself is the reference.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGitConfigAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("this test needs git")
	}
	texts := []string{
		"[core]\n\tfsmonitor = ./hook\n",
		"[core] fsmonitor = ./hook\n",
		"[CORE]\n\tFsMonitor = \"./h\"\\\n\"ook\" ; comment\n",
		"[diff \"PDF x\"]\n\ttextconv = pdftotext  -layout   # trailing\n",
		"[remote.Origin]\n\turl = x\n",
		"# c\n; c\n[alias]\n\tst = status\n\tx = \"!rm \\\"a b\\\"\"\n\tbare\n",
		"[user]\n\tname = \"[core] fsmonitor = x\"\n",
		"[a]\n\tk = one \\\n two\n",
		"[a]\r\n\tk = crlf\r\n",
		"[a]\n\tk = \"tab\\there\"\n",
		"\ufeff[a]\n\tk = bom\n",
		"[a \"sub\\\"q\"]\n\tk = v\n",
		"[core\n",
		"fsmonitor = x\n",
		"[core]\n\tx = \"unclosed\n",
		"[core]\n\t1x = y\n",
		"[core]\n\tx = \\q\n",
		"[a b]\n\tk = v\n",
	}
	dir := t.TempDir()
	for i, text := range texts {
		f := filepath.Join(dir, "c"+string(rune('a'+i)))
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", f, "--list", "--no-includes")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
		out, gerr := cmd.Output()
		var got []string
		problem := parseGitConfig(text, func(section, subsection, key, value string) {
			name := section + "." + key
			if section == "" {
				name = key
			}
			if subsection != "" {
				name = section + "." + subsection + "." + key
			}
			got = append(got, name+"="+value)
		})
		if gerr != nil {
			if problem == "" {
				t.Errorf("%q: git refuses it (%v), pid reads %q", text, gerr, got)
			}
			continue
		}
		if problem != "" {
			t.Errorf("%q: git reads it, pid says %s", text, problem)
			continue
		}
		var want []string
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if line == "" {
				continue
			}
			if !strings.Contains(line, "=") {
				line += "=" // a key alone: pid reads its value as ""
			}
			want = append(want, line)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q:\npid reads\n%s\ngit reads\n%s", text, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// FuzzParseGitConfig: any text, as a workspace may ship, is read without a panic, and a
// text pid reads gives settings with lower-case sections and keys.
func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{"[core]\n\tfsmonitor = x\n", "[a \"b\\\"]\"] k = \"v\\\n\" ; c\n", "[x.y]\nk\n", "\\", "[", "\"", "k=\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_ = parseGitConfig(text, func(section, subsection, key, value string) {
			if section != strings.ToLower(section) || key != strings.ToLower(key) || key == "" {
				t.Fatalf("%q: section %q, key %q", text, section, key)
			}
		})
		_, _ = riskyGitSettings(text, "f", "x")
	})
}
