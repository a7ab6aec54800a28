package problems

import (
	"path/filepath"
	"strings"
	"testing"
)

func diag(path string, sev int, line, col uint32, msg, source string) Diagnostic {
	d := Diagnostic{Path: path, Severity: sev, Message: msg, Source: source}
	d.Range.Start.Line, d.Range.Start.Character = line, col
	return d
}

// Lines sorts by position, folds a multi-line message onto one line, counts from 1, and stops
// at max with the count of the rest.
func TestLinesCapsAt20(t *testing.T) {
	var ds []Diagnostic
	for i := range 25 {
		ds = append(ds, diag("/a", 1, uint32(24-i), 0, "bad\nthing", ""))
	}
	lines := strings.Split(strings.TrimSuffix(Lines(ds, MaxShown), "\n"), "\n")
	if len(lines) != 21 || lines[0] != "L1:1 bad thing" || lines[19] != "L20:1 bad thing" || lines[20] != "... and 5 more" {
		t.Errorf("lines = %q", lines)
	}
	if ds[0].Range.Start.Line != 24 {
		t.Errorf("Lines sorted its caller's slice: first line is %d", ds[0].Range.Start.Line)
	}
}

// Report names each changed file that has errors, in the order given, with who found them;
// warnings and other files' problems are left out; no errors is "".
func TestReport(t *testing.T) {
	ds := []Diagnostic{
		diag("/w/b.go", 1, 4, 2, "undefined: x", "compiler"),
		diag("/w/a.go", 2, 0, 0, "unused", "vet"),
		diag("/w/a.go", 1, 9, 0, "missing return", ""),
		diag("/w/c.go", 1, 0, 0, "not asked about", ""),
	}
	got := Report("the editor", []string{"/w/b.go", "/w/a.go"}, ds, filepath.Base)
	want := "Problems the editor reports in b.go after this change:\nL5:3 undefined: x (compiler)\n\n" +
		"Problems the editor reports in a.go after this change:\nL10:1 missing return"
	if got != want {
		t.Errorf("Report =\n%s\nwant\n%s", got, want)
	}
	if got := Report("the editor", []string{"/w/a.go"}, ds[1:2], filepath.Base); got != "" {
		t.Errorf("Report of warnings only = %q, want empty", got)
	}
}

// Filter keeps one path's problems (every path's for "") of the given severity or worse.
func TestFilter(t *testing.T) {
	ds := []Diagnostic{diag("/a", 1, 0, 0, "e", ""), diag("/a", 3, 0, 0, "i", ""), diag("/b", 2, 0, 0, "w", "")}
	if got := Filter(ds, "/a", 2); len(got) != 1 || got[0].Message != "e" {
		t.Errorf("Filter(/a, 2) = %+v", got)
	}
	if got := Filter(ds, "", 2); len(got) != 2 || got[1].Message != "w" {
		t.Errorf(`Filter("", 2) = %+v`, got)
	}
}
