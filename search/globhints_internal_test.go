// This file checks the quick rejections of globs matched by a regular expression (a literal
// every match holds, the bytes a match ends with) against the expression alone, and that
// grep's literal prefilter scans for a byte that is rare in C as well as in Go.

package search

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The quick rejections never turn down a name the expression matches, and they are there
// for the shapes they are meant for.
func TestGlobHintsAgreeWithRegexp(t *testing.T) {
	globs := []string{"*.[oa]", "*.c.[012]*.*", "[Mm]akefile", "a?c", "*.[!o]", "x/**/y.[ch]", "*é", "[é]", "*.[a-c]",
		"**/*.mod.c", "vmlinux*.lds", "*\\]", "[", "*.[[:alpha:]]", "?", "*.tar.gz"}
	names := []string{"", "a", "x.o", "x.a", "x.c", "x.c.0", "x.c.1.y", "Makefile", "makefile", "abc", "a/c", "x.h",
		"x/y.c", "x/a/b/y.h", "x/y.o", "café", "é", "e", "x.b", "a.mod.c", "d/a.mod.c", "vmlinux.lds", "vmlinux-x.lds",
		"x]", "[", "x.Z", "x.tar.gz", "x.tar.gzz", ".o"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abco.é/[]0xM"
	for range 2000 {
		b := make([]rune, rng.IntN(7))
		for i := range b {
			b[i] = []rune(alphabet)[rng.IntN(len([]rune(alphabet)))]
		}
		names = append(names, string(b))
	}
	hinted := 0
	for _, g := range globs {
		m, err := compileGlob(g)
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		if m.kind != globByRegexp {
			continue
		}
		if m.need != "" || m.last != nil {
			hinted++
		}
		for _, n := range names {
			if got, want := m.match(n), m.re.MatchString(n); got != want {
				t.Errorf("glob %q, name %q: match = %v, the expression alone says %v (need %q)", g, n, got, want, m.need)
			}
		}
	}
	for g, want := range map[string]string{"*.[oa]": "ao", "*.c.[012]*.*": "", "[Mm]akefile": "e", "*.[a-c]": "abc"} {
		m, _ := compileGlob(g)
		var got string
		if m.last != nil {
			for c := range 256 {
				if m.last[c] {
					got += string(rune(c))
				}
			}
		}
		if got != want {
			t.Errorf("glob %q: a match ends with one of %q; want %q", g, got, want)
		}
	}
	for g, want := range map[string]string{"*.c.[012]*.*": ".c.", "[Mm]akefile": "akefile", "vmlinux*.lds": "vmlinux"} {
		if m, _ := compileGlob(g); m.need != want {
			t.Errorf("glob %q: need = %q; want %q", g, m.need, want)
		}
	}
	if hinted < 8 {
		t.Errorf("only %d globs had a quick rejection", hinted)
	}
}

// The prefilter of a literal scans for its rarest byte in source code of both Go and C: "_"
// is as common as "e" in Linux's sources, and scanning for it made a kernel-wide grep of
// "_probe(struct usb_" twice as slow.
func TestLitFinderRareByte(t *testing.T) {
	for lit, want := range map[string]byte{"_probe(struct usb_": 'b', "EXPORT_SYMBOL_GPL(usb_": 'Y', "a_b": 'b'} {
		m, err := NewMatcher(regexp.QuoteMeta(lit))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.lit.b1; got != want {
			t.Errorf("the prefilter of %q scans for %q; want %q", lit, got, want)
		}
	}
}
