package tools_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/tools"
)

func numbered(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestReadShowsLineNumbers(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"a.txt": "first\n\tsecond\nthird"})
	r := call(t, ws, "read", `{"path":"a.txt"}`)
	want := "     1\tfirst\n     2\t\tsecond\n     3\tthird\n"
	if got := mustOK(t, r); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	d := r.details.(tools.ReadDetails)
	if d.Kind != "text" || d.TotalLines != 3 || d.StartLine != 1 || d.EndLine != 3 || d.Truncated || d.Path != "a.txt" {
		t.Errorf("details %+v", d)
	}
}

func TestReadOffsetLimitAndReadOnNote(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{"n.txt": numbered(1, 10), "big.txt": numbered(1, 2500)})
	r := call(t, ws, "read", `{"path":"n.txt","offset":4,"limit":3}`)
	got := mustOK(t, r)
	if !strings.HasPrefix(got, "     4\tline 4\n     5\tline 5\n     6\tline 6\n") || strings.Contains(got, "line 7") || strings.Contains(got, "line 3\n") {
		t.Errorf("wrong window: %q", got)
	}
	if !strings.Contains(got, "[Showing lines 4-6 of 10. Use offset=7 to read on.]") {
		t.Errorf("no read-on note: %q", got)
	}
	// JSON Schema counts 2.0 as an integer: it must work too.
	if got := mustOK(t, call(t, ws, "read", `{"path":"n.txt","offset":9.0}`)); got != "     9\tline 9\n    10\tline 10\n" {
		t.Errorf("offset 9.0: %q", got)
	}
	// The default limit is 2000 lines.
	r = call(t, ws, "read", `{"path":"big.txt"}`)
	got = mustOK(t, r)
	if !strings.Contains(got, "  2000\tline 2000\n") || strings.Contains(got, "line 2001") || !strings.Contains(got, "Use offset=2001 to read on.") {
		t.Errorf("default limit: tail %q", got[len(got)-200:])
	}
	if d := r.details.(tools.ReadDetails); !d.Truncated || d.EndLine != 2000 || d.TotalLines != 2500 {
		t.Errorf("details %+v", d)
	}
	mustFail(t, call(t, ws, "read", `{"path":"n.txt","offset":11}`), "offset 11 is past the end of n.txt, which has 10 lines")
	mustFail(t, call(t, ws, "read", `{"path":"n.txt","offset":0}`), "offset")
}

func TestReadCutsLongLinesAndCapsBytes(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes; the cut must not split a rune
	var many strings.Builder
	for i := 0; i < 100; i++ {
		many.WriteString(strings.Repeat("x", 1500) + "\n")
	}
	ws, _ := newWorkspace(t, map[string]string{"long.txt": "a\n" + long + "\nb\n", "wide.txt": many.String()})
	r := call(t, ws, "read", `{"path":"long.txt"}`)
	got := mustOK(t, r)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "     2\t"+strings.Repeat("é", 1000)+" … [line cut: 5.9 KB in all]") || lines[2] != "     3\tb" {
		t.Errorf("long line not cut as expected: %.80q...", lines[1])
	}
	if d := r.details.(tools.ReadDetails); d.TruncatedLines != 1 || d.Truncated {
		t.Errorf("details %+v", d)
	}
	// 100 lines of 1500 bytes exceed 50KB: the read stops early with a note.
	r = call(t, ws, "read", `{"path":"wide.txt"}`)
	got = mustOK(t, r)
	if len(got) > tools.ReadMaxBytes+200 {
		t.Errorf("output %d bytes, over the cap", len(got))
	}
	d := r.details.(tools.ReadDetails)
	if !d.Truncated || d.EndLine >= 100 || !strings.Contains(got, fmt.Sprintf("output capped at 50.0 KB. Use offset=%d to read on.", d.EndLine+1)) {
		t.Errorf("byte cap: details %+v, tail %q", d, got[len(got)-120:])
	}
}

func TestReadImage(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	ws, dir := newWorkspace(t, nil)
	// The name says .txt: detection goes by the magic bytes.
	if err := os.WriteFile(filepath.Join(dir, "pic.txt"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	testfs.WriteFiles(t, dir, map[string]string{
		"j.bin": "\xff\xd8\xff\xe0rest",
		"g.bin": "GIF89a....",
		"w.bin": "RIFF\x00\x00\x00\x00WEBPVP8 ",
	})
	r := call(t, ws, "read", `{"path":"pic.txt"}`)
	mustOK(t, r)
	if len(r.content) != 2 || r.content[1].Type != llm.ContentImage || r.content[1].MimeType != "image/png" {
		t.Fatalf("content %+v", r.content)
	}
	data, err := base64.StdEncoding.DecodeString(r.content[1].Data)
	if err != nil || !bytes.Equal(data, buf.Bytes()) {
		t.Errorf("image data does not round-trip (%v)", err)
	}
	if d := r.details.(tools.ReadDetails); d.Kind != "image" || d.MimeType != "image/png" {
		t.Errorf("details %+v", d)
	}
	for name, mime := range map[string]string{"j.bin": "image/jpeg", "g.bin": "image/gif", "w.bin": "image/webp"} {
		r := call(t, ws, "read", jsonArgs(t, map[string]string{"path": name}))
		if len(r.content) != 2 || r.content[1].MimeType != mime {
			t.Errorf("%s: content %+v", name, r.content)
		}
	}
}

func TestReadBinaryIsDescribed(t *testing.T) {
	ws, _ := newWorkspace(t, map[string]string{
		"nul.dat":    "abc\x00def" + strings.Repeat("z", 100),
		"latin1.txt": "caf\xe9\n",
		// Valid UTF-8 whose 8KB sniff window cuts a rune in half is still text.
		"edge.txt": strings.Repeat(strings.Repeat("a", 63)+"\n", 127) + strings.Repeat("b", 63) + "é\n",
		// A NUL after the sniff window does not make the file binary.
		"late.txt": strings.Repeat("a\n", 5000) + "\x00",
	})
	r := call(t, ws, "read", `{"path":"nul.dat"}`)
	if got := mustOK(t, r); got != "nul.dat is a binary file (107 B); its content is not shown." {
		t.Errorf("got %q", got)
	}
	if d := r.details.(tools.ReadDetails); d.Kind != "binary" || d.Size != 107 {
		t.Errorf("details %+v", d)
	}
	if got := mustOK(t, call(t, ws, "read", `{"path":"latin1.txt"}`)); !strings.Contains(got, "binary file") {
		t.Errorf("invalid UTF-8 not taken as binary: %q", got)
	}
	if got := mustOK(t, call(t, ws, "read", `{"path":"edge.txt"}`)); !strings.HasSuffix(got, "bé\n") {
		t.Errorf("rune cut by the sniff window made the file binary: %q", got[len(got)-200:])
	}
	if got := mustOK(t, call(t, ws, "read", `{"path":"late.txt"}`)); strings.Contains(got, "binary") {
		t.Errorf("late NUL: %.60q", got)
	}
}

func TestReadErrors(t *testing.T) {
	ws, dir := newWorkspace(t, map[string]string{"d/x": "", "empty.txt": ""})
	mustFail(t, call(t, ws, "read", `{"path":"nope.txt"}`), "file not found: nope.txt")
	mustFail(t, call(t, ws, "read", `{"path":"d"}`), "d is a folder", "use ls")
	mustFail(t, call(t, ws, "read", `{}`), "path")
	if got := mustOK(t, call(t, ws, "read", `{"path":"empty.txt"}`)); got != "empty.txt is empty." {
		t.Errorf("empty: %q", got)
	}
	// A FIFO would block a plain open: it is refused without opening it.
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no mkfifo:", err)
	}
	mustFail(t, call(t, ws, "read", `{"path":"fifo"}`), "not a regular file")
}
