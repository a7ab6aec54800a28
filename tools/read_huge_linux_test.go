package tools

// Reads of large files (issue 15): the first lines of a huge file cost the lines asked,
// and the stale-edit guard stays sound for the part not read. Bytes read are counted by
// the kernel (/proc/self/io rchar), never timed.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pid-agent/pid/workspace"
)

// bytesRead returns how many bytes this process has read with read(2) and the like.
func bytesRead(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// trustStamps makes every file's stamp count as settled for the test
// (workspace.StampSettle < 0), as it would be for a file last changed more than
// StampSettle ago.
func trustStamps(t *testing.T) {
	old := workspace.StampSettle
	workspace.StampSettle = -time.Hour
	t.Cleanup(func() { workspace.StampSettle = old })
}

// seenOf returns the fingerprint recorded for the real path p.
func seenOf(ws *Workspace, p string) (workspace.Fingerprint, bool) { return ws.seen.Seen(p) }

// Reading 50 lines of a 32 MB file reads about one buffer of it, not the file (the old
// read hashed and counted it whole), and says the rest was not counted.
func TestReadStartOfHugeFileReadsOnlyThat(t *testing.T) {
	trustStamps(t)
	text := numberedLines(1100000) // 33 MB
	ws, dir := testWorkspace(t, map[string]string{"huge.txt": text})
	before := bytesRead(t)
	res, err := ws.read(context.Background(), "huge.txt", 1, 50)
	read := bytesRead(t) - before
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reading 50 lines read %d bytes of a %d-byte file", read, len(text))
	if read > 1<<20 {
		t.Errorf("reading 50 lines read %d bytes of a %d-byte file; want at most 1 MB", read, len(text))
	}
	out := res.Content[0].Text
	if !strings.HasPrefix(out, "     1\tline 00000001 of the test text\n") || !strings.Contains(out, "    50\tline 00000050 of the test text\n") || strings.Contains(out, "line 00000051") {
		t.Errorf("wrong lines: %.200q", out)
	}
	if want := "[Showing lines 1-50 of huge.txt (32.5 MB; read only this far, so its line count is not known). Use offset=51 to read on.]"; !strings.Contains(out, want) {
		t.Errorf("no note %q in %q", want, out[len(out)-200:])
	}
	d := res.Details.(ReadDetails)
	if !d.Partial || !d.Truncated || d.TotalLines != 0 || d.StartLine != 1 || d.EndLine != 50 {
		t.Errorf("details %+v", d)
	}
	fp, ok := seenOf(ws, filepath.Join(dir, "huge.txt"))
	if !ok || fp.Whole || fp.N == 0 || fp.N > 1<<20 {
		t.Errorf("fingerprint %+v: want the part read, with the stamp", fp)
	}
	// A window further in reads up to it, still not the rest.
	before = bytesRead(t)
	res, err = ws.read(context.Background(), "huge.txt", 100000, 3)
	read = bytesRead(t) - before
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].Text; !strings.HasPrefix(got, "100000\tline 00100000 of the test text\n100001\t") || read > 4<<20 {
		t.Errorf("offset 100000: read %d bytes, got %.100q", read, got)
	}
}

// A large file changed in the last workspace.StampSettle is read, counted and hashed whole: its
// stamp cannot vouch for the part not read yet.
func TestReadRecentlyChangedHugeFileIsReadWhole(t *testing.T) {
	old := workspace.StampSettle
	workspace.StampSettle = time.Hour
	t.Cleanup(func() { workspace.StampSettle = old })
	text := numberedLines(200000) // 6 MB
	ws, dir := testWorkspace(t, map[string]string{"big.txt": text})
	before := bytesRead(t)
	res, err := ws.read(context.Background(), "big.txt", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if read := bytesRead(t) - before; read < int64(len(text)) {
		t.Errorf("read %d bytes of a %d-byte file changed just now; want all of it", read, len(text))
	}
	d := res.Details.(ReadDetails)
	if d.Partial || d.TotalLines != 200000 || !strings.Contains(res.Content[0].Text, "[Showing lines 1-5 of 200000. Use offset=6 to read on.]") {
		t.Errorf("details %+v, text %q", d, res.Content[0].Text)
	}
	if fp, _ := seenOf(ws, filepath.Join(dir, "big.txt")); !fp.Whole {
		t.Errorf("fingerprint %+v: want the whole content's", fp)
	}
}

// After a partial read, a change beyond the part read that keeps the size and puts the
// mtime back is still seen (ctime moved): edit refuses, ChangedFiles' check says changed.
// Unchanged, the file may be edited, and reading it again clears the refusal.
func TestPartialReadGuardsThePartNotRead(t *testing.T) {
	trustStamps(t)
	text := numberedLines(200000) // 6 MB
	ws, dir := testWorkspace(t, map[string]string{"big.txt": text})
	p := filepath.Join(dir, "big.txt")
	ctx := context.Background()
	if _, err := ws.read(ctx, "big.txt", 1, 10); err != nil {
		t.Fatal(err)
	}
	fp, _ := seenOf(ws, p)
	if fp.Whole {
		t.Fatalf("fingerprint %+v: the read was not partial", fp)
	}
	if !ws.seen.Unchanged(p, fp) {
		t.Fatal("an unchanged file is not the same")
	}
	// Unchanged: an edit goes ahead.
	if _, err := ws.edit(ctx, "big.txt", []replacement{{"line 00000005 of", "line 00000005 in"}}); err != nil {
		t.Fatalf("edit after a partial read: %v", err)
	}

	if _, err := ws.read(ctx, "big.txt", 1, 10); err != nil {
		t.Fatal(err)
	}
	fp, _ = seenOf(ws, p)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Change one byte far past the part read, same size, mtime put back. The kernel's
	// clock for file times ticks coarsely: write until the ctime has moved (the case
	// StampSettle exists for is a write within the same tick).
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; ; i++ {
		if _, err := f.WriteAt([]byte{byte('A' + i%26)}, int64(len(text))-3); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		now, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := workspace.StampOf(now); st.Ctime != fp.Stamp.Ctime {
			if st.Mtime != fp.Stamp.Mtime || st.Size != fp.Stamp.Size {
				t.Fatalf("the size or mtime moved: %+v, was %+v", st, fp.Stamp)
			}
			break
		}
	}
	if ws.seen.Unchanged(p, fp) {
		t.Error("Unchanged: a file changed past the part read is the same")
	}
	_, err = ws.edit(ctx, "big.txt", []replacement{{"line 00000006 of", "line 00000006 in"}})
	if err == nil || !strings.Contains(err.Error(), "big.txt changed on disk since you last read it") {
		t.Errorf("edit after a hidden change: %v, want it refused", err)
	}
	got, _ := os.ReadFile(p)
	if bytes.Contains(got, []byte("line 00000006 in")) {
		t.Error("the refused edit changed the file")
	}
	if _, err := ws.read(ctx, "big.txt", 1, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.edit(ctx, "big.txt", []replacement{{"line 00000006 of", "line 00000006 in"}}); err != nil {
		t.Errorf("edit after reading again: %v", err)
	}
}
