//go:build linux || darwin

package tools_test

// A write that fails half-way (a full disk, a file size limit) leaves no temporary file in
// the user's folder. The failure is real: the test runs itself again in a child process
// whose file size limit (RLIMIT_FSIZE) is smaller than the content, so write(2) fails with
// EFBIG there, as it fails with ENOSPC on a full disk.

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pid-agent/pid/internal/testfs"
	"github.com/pid-agent/pid/tools"
)

// fsizeDirEnv names the folder the child writes in; set only in the child.
const fsizeDirEnv = "PID_TEST_FSIZE_DIR"

func TestFailedWriteLeavesNoTempFile(t *testing.T) {
	if dir := os.Getenv(fsizeDirEnv); dir != "" {
		failedWritesChild(t, dir)
		return
	}
	dir := testfs.RealTemp(t)
	testfs.WriteFiles(t, dir, map[string]string{"old.txt": "one\n"})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestFailedWriteLeavesNoTempFile$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fsizeDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "failed as injected") {
		t.Fatalf("the child did not run the failing writes:\n%s", out)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"old.txt"}) {
		t.Errorf("after the failed writes the folder holds %v, want only old.txt (no .pid-tmp-* file)", got)
	}
	if got := readFile(t, filepath.Join(dir, "old.txt")); got != "one\n" {
		t.Errorf("the failed edit changed the file: %q", got)
	}
}

// failedWritesChild runs in the child: with a 4 KiB file size limit it creates a file and
// replaces one (write, then write and edit over it) with 64 KiB each, which must all fail.
func failedWritesChild(t *testing.T, dir string) {
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead of killing the process
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 4096, Max: 4096}); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	big := strings.Repeat("x", 64<<10)
	mustFail(t, call(t, ws, "write", jsonArgs(t, map[string]any{"path": "new.txt", "content": big})), "too large")
	mustOK(t, call(t, ws, "read", `{"path":"old.txt"}`))
	mustFail(t, call(t, ws, "write", jsonArgs(t, map[string]any{"path": "old.txt", "content": big})), "too large")
	mustFail(t, call(t, ws, "edit", jsonArgs(t, map[string]any{"path": "old.txt",
		"edits": []map[string]string{{"oldText": "one", "newText": big}}})), "too large")
	t.Log("the writes failed as injected")
}
