package wire

// Tests that PartialJSON, which closes a document piece by piece with a scanner kept across
// pieces, gives exactly what the one-shot closer of before gave for every prefix (random
// and fuzzed inputs), and that its work is linear: each piece costs its own length plus the
// closing suffix, never a rescan of everything before it.

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// closeJSONReference is the one-shot closer pid used before PartialJSON, kept unchanged as
// the reference: it rescans the whole text, copies the stack at every safe point, and
// checks its result with json.Valid.
func closeJSONReference(s []byte) []byte {
	var (
		stack     []byte
		inString  bool
		escape    bool
		isKey     bool
		expectKey bool
		safe      = -1
		safeStack []byte
		strSafe   int
	)
	mark := func(end int) {
		safe = end
		safeStack = append(safeStack[:0], stack...)
	}
	start := 0
	for start < len(s) && isSpace(s[start]) {
		start++
	}
	if start == len(s) || (s[start] != '{' && s[start] != '[') {
		return nil
	}
	for i := start; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escape:
				escape = false
				if c == 'u' {
					if i+4 >= len(s) {
						i = len(s)
						continue
					}
					i += 4
				}
				strSafe = i + 1
			case c == '\\':
				escape = true
			case c == '"':
				inString = false
				if isKey {
					isKey = false
				} else {
					mark(i + 1)
				}
			default:
				strSafe = i + 1
			}
			continue
		}
		switch c {
		case '{', '[':
			stack = append(stack, c)
			expectKey = c == '{'
			mark(i + 1)
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			mark(i + 1)
		case '"':
			inString = true
			isKey = expectKey
			expectKey = false
			strSafe = i + 1
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
		default:
			if isSpace(c) {
				continue
			}
			j := i
			for j < len(s) && !isSpace(s[j]) && !strings.ContainsRune(",:]}", rune(s[j])) {
				j++
			}
			if j < len(s) {
				mark(j)
			}
			i = j - 1
		}
	}
	var out []byte
	switch {
	case inString && !isKey:
		out = append(out, s[:strSafe]...)
		out = append(out, '"')
		out = closeStack(out, stack)
	case safe >= 0:
		out = append(out, s[:safe]...)
		out = closeStack(out, safeStack)
	default:
		return nil
	}
	if json.Valid(out) {
		return out
	}
	if safe >= 0 {
		out = append(out[:0], s[:safe]...)
		out = closeStack(out, safeStack)
		if json.Valid(out) {
			return out
		}
	}
	return nil
}

// checkPieces writes s to a PartialJSON in the pieces cuts gives (increasing offsets) and
// fails the test unless, after every piece, Closed equals the reference closer of the text
// so far and is valid JSON.
func checkPieces(t *testing.T, s []byte, cuts []int) {
	t.Helper()
	var d PartialJSON
	prev := 0
	for _, c := range append(cuts, len(s)) {
		if c < prev || c > len(s) {
			continue
		}
		d.Write(s[prev:c])
		prev = c
		got, want := d.Closed(), closeJSONReference(s[:c])
		if !bytes.Equal(got, want) {
			t.Fatalf("after %q (written in pieces ending at %v):\n got  %q\n want %q", s[:c], cuts, got, want)
		}
		if got != nil && !json.Valid(got) {
			t.Fatalf("after %q: %q is not valid JSON", s[:c], got)
		}
	}
	if !bytes.Equal(d.Raw(), s) {
		t.Fatalf("Raw %q, want %q", d.Raw(), s)
	}
}

// randomJSON returns a random JSON value of at most depth levels, with the odd escape,
// number form and bit of whitespace.
func randomJSON(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", "", " ", "\n  "}[r.IntN(5)] }
	switch k := r.IntN(9); {
	case k < 2 && depth > 0:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, ws()+randomJSON(r, depth-1)+ws())
		}
		return "[" + strings.Join(parts, ",") + "]"
	case k < 4 && depth > 0:
		var parts []string
		for range r.IntN(4) {
			key, _ := json.Marshal([]string{"path", "a b", "é", "k\"q", `\`}[r.IntN(5)])
			parts = append(parts, ws()+string(key)+ws()+":"+ws()+randomJSON(r, depth-1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case k < 6:
		return []string{`"x"`, `""`, `"line\nnext"`, `"q\"uote"`, `"\u00e9\u12AB"`, `"a}b]c,d:e"`, `"\\"`, `"\/"`}[r.IntN(8)]
	case k < 8:
		return []string{"0", "-1", "12", "1.5", "-0.25e-3", "1E+9", "3e7"}[r.IntN(7)]
	}
	return []string{"true", "false", "null"}[r.IntN(3)]
}

// mutate damages s at a few random places: a byte dropped, doubled or replaced by one of
// the characters that matter to the scanner.
func mutate(r *rand.Rand, s string) string {
	const alphabet = "{}[]\",:\\ u0e1-+.tfnx\x01"
	b := []byte(s)
	for range r.IntN(3) {
		if len(b) == 0 {
			break
		}
		i := r.IntN(len(b))
		switch r.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b = append(b[:i+1], b[i:]...)
		default:
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// randomCuts returns up to n increasing offsets into a text of length size.
func randomCuts(r *rand.Rand, size, n int) []int {
	var cuts []int
	at := 0
	for range n {
		if at >= size {
			break
		}
		at += 1 + r.IntN(max(1, size/n+1))
		cuts = append(cuts, min(at, size))
	}
	return cuts
}

// PartialJSON agrees with the reference closer on every prefix of random documents, intact
// and damaged, written in random pieces and byte by byte.
func TestPartialJSONMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		doc := randomJSON(r, 4)
		if r.IntN(2) == 0 {
			doc = "{\"v\": " + doc + "}"
		}
		if n%3 == 1 {
			doc = mutate(r, doc)
		}
		if n%5 == 0 {
			doc = "  " + doc + " "
		}
		s := []byte(doc)
		checkPieces(t, s, randomCuts(r, len(s), 1+r.IntN(8)))
		every := make([]int, len(s))
		for i := range every {
			every[i] = i + 1
		}
		checkPieces(t, s, every)
	}
}

// The cases the old tests named, piece by piece.
func TestPartialJSONKnownCases(t *testing.T) {
	for _, s := range []string{
		``, `   `, `"a string"`, `{`, ` {`, `{"pa`, `{"path"`, `{"path":`, `{"path": "a.`,
		`{"path": "a.txt", "n": 12,`, `{"ok": tr`, `{"a": [1, 2, "x`, `{"s": "line\`,
		`{"s": "\u00e`, `{"s": "é\u00e9x`, `{"a": 1}}`, `[1[`, `{"a" "b`, `{} x`, `{} {`,
		`["\u12"x`, `[tru]`, `[01,`, `[1e,`, `{"a":1,"b":2 "c`, `[}`, "[\"a\x01b\"", `{"a":-}`,
	} {
		b := []byte(s)
		every := make([]int, len(b))
		for i := range every {
			every[i] = i + 1
		}
		checkPieces(t, b, every)
		checkPieces(t, b, nil)
	}
}

// deepPieces returns n pieces of 18 bytes that open objects and arrays ever deeper (8
// levels a piece: 1,000 pieces stay within encoding/json's 10,000), with a string value on
// the way, as a model streaming deeply nested arguments does.
func deepPieces(n int) []string {
	piece := `"abc",{"k":[` + strings.Repeat("[", 6)
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = piece
	}
	pieces[0] = "[" + piece
	return pieces
}

// The work of closing a document piece by piece is linear: with 1,000 pieces of deep
// nesting, the bytes scanned and copied are at most twice the text plus the closing
// suffixes (the part the contract allows to grow with depth), where the one-shot closer
// rescanned everything for every piece (and copied its stack at every bracket).
func TestPartialJSONWorkIsLinear(t *testing.T) {
	var d PartialJSON
	suffixes := 0
	var last []byte
	for _, p := range deepPieces(1000) {
		d.WriteString(p)
		last = d.Closed()
		if last == nil {
			t.Fatalf("nothing closed after %d bytes", len(d.Raw()))
		}
		suffixes += len(d.stack) + 1 // the closers, and a quote for an open string value
	}
	n := len(d.Raw())
	if !json.Valid(last) {
		t.Fatal("the closed document is not valid JSON")
	}
	limit := 2*n + suffixes
	t.Logf("%d bytes in 1000 pieces, depth %d: work %d (limit %d; a rescan per piece would be %d)", n, len(d.stack), d.work, limit, 1000*n/2)
	if d.work > limit {
		t.Errorf("work %d for %d bytes in 1000 pieces, want at most %d", d.work, n, limit)
	}
	// Scanning alone is exactly one pass over the text.
	if d.pos != n {
		t.Errorf("scanned %d bytes of %d", d.pos, n)
	}
}

// Beyond encoding/json's depth limit nothing valid can be made (the reference gave nil
// too): the closer never hands out a document json.Valid refuses.
func TestPartialJSONDepthLimit(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		s := []byte(strings.Repeat("[", depth))
		var d PartialJSON
		d.Write(s)
		got, want := d.Closed(), closeJSONReference(s)
		if !bytes.Equal(got, want) || (got != nil) != (depth <= maxDepth) {
			t.Errorf("depth %d: got %d bytes, reference %d bytes", depth, len(got), len(want))
		}
	}
}

// Closed's result is reused: it stays valid until the next call only, and Raw holds what
// was written.
func TestPartialJSONReusesItsBuffer(t *testing.T) {
	var d PartialJSON
	d.WriteString(`{"a": "x`)
	first := d.Closed()
	if string(first) != `{"a": "x"}` {
		t.Fatalf("first %q", first)
	}
	d.WriteString(`yz"}`)
	if got := string(d.Closed()); got != `{"a": "xyz"}` {
		t.Errorf("second %q", got)
	}
	if string(d.Raw()) != `{"a": "xyz"}` {
		t.Errorf("Raw %q", d.Raw())
	}
}

// FuzzPartialJSON: no input panics, every closed document is valid JSON, and after every
// piece the result is exactly the reference closer's (so wherever the old closer gave valid
// JSON, this one gives the same). split picks the pieces.
func FuzzPartialJSON(f *testing.F) {
	for _, s := range []string{
		`{"path": "src/a b.go", "edits": [{"old": "x := \"q\\n\"", "new": "y\u00e9"}, {"n": -1.5e3, "ok": false, "z": null}], "e": {}}`,
		`[1, [2, [3, {"a": "\u00e9"}]]]`, `{"s": "\u12`, `{"a": 1}}`, `[tru]`, `{"a" "b"}`,
	} {
		f.Add([]byte(s), uint64(7))
	}
	f.Fuzz(func(t *testing.T, s []byte, split uint64) {
		if len(s) > 4096 {
			return // the reference is quadratic; long inputs add nothing
		}
		r := rand.New(rand.NewPCG(split, split>>32))
		checkPieces(t, s, randomCuts(r, len(s), 1+int(split%16)))
	})
}

// BenchmarkCloseDeepNesting streams 1,000 pieces of deep nesting (18 KB, depth 8,000) and
// closes the arguments after every piece, as the builder does: incrementally with
// PartialJSON, with the one-shot CloseJSON (linear per call, so quadratic in all), and with
// the reference closer of before (100 pieces only: it copies its stack at every bracket,
// so a call costs the text times its depth).
func BenchmarkCloseDeepNesting(b *testing.B) {
	b.Run("partial/1000", func(b *testing.B) {
		pieces := deepPieces(1000)
		b.ReportAllocs()
		for b.Loop() {
			var d PartialJSON
			for _, p := range pieces {
				d.WriteString(p)
				d.Closed()
			}
		}
	})
	for _, n := range []int{100, 1000} {
		b.Run("oneshot/"+itoa(n), func(b *testing.B) {
			pieces := deepPieces(n)
			b.ReportAllocs()
			for b.Loop() {
				var acc []byte
				for _, p := range pieces {
					acc = append(acc, p...)
					CloseJSON(acc)
				}
			}
		})
	}
	b.Run("reference/100", func(b *testing.B) {
		pieces := deepPieces(100)
		b.ReportAllocs()
		for b.Loop() {
			var acc []byte
			for _, p := range pieces {
				acc = append(acc, p...)
				closeJSONReference(acc)
			}
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
