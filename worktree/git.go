// This file runs git. A repository's own configuration is workspace content: it can name
// hooks, an fsmonitor program and filter drivers that git would start. Every git command
// here runs with hooks pointed at /dev/null, fsmonitor off, and every filter driver that
// the repository's own configuration (not the person's global or system one) defines
// switched off; it runs in an environment without the variables that would point git at
// another repository or index, and never prompts.

package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// safeConfig is given to every git command: no hook, no fsmonitor, no automatic gc or
// maintenance (their hooks and programs), no signing program, no recursion into
// submodules.
var safeConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.useBuiltinFSMonitor=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
	"-c", "submodule.recurse=false",
	"-c", "core.pager=cat",
}

// droppedEnv are the variables a git command here never inherits: they would point it at
// another repository, work tree or index, or add configuration.
var droppedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF",
	"GIT_DIFF_OPTS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_ASKPASS",
}

// gitWaitDelay is how long a cancelled git command's output may stay open after it was
// killed (a process it started holding the pipes).
const gitWaitDelay = 10 * time.Second

// gitEnv is the environment of a repository's git commands: the process's without
// droppedEnv, what keeps git from prompting or taking optional locks on the main index,
// the configuration that switches off the repository's filter drivers (config), then
// extra.
func gitEnv(config [][2]string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_") || containsString(droppedEnv, k) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat",
		"GIT_CONFIG_COUNT="+strconv.Itoa(len(config)))
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return append(env, extra...)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gitError is a git command's failure: its arguments, exit status and what it said.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode returns the exit status of a git command's error, or -1 when it did not exit.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// errOutputLimit is a limited command's error for output over its limit.
var errOutputLimit = errors.New("output over the limit")

// limitWriter keeps at most max bytes (0: no limit) and fails past them, which makes git
// stop (the pipe is closed: its next write fails).
type limitWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.max > 0 && w.buf.Len()+len(p) > w.max {
		w.over = true
		return 0, errOutputLimit
	}
	return w.buf.Write(p)
}

// git runs one git command in dir with env (gitEnv's) and stdin, and returns its standard
// output, of at most limit bytes (0: no limit; over it the error wraps errOutputLimit).
// A failure is a *gitError naming the command and what git said.
func git(ctx context.Context, dir string, env []string, stdin io.Reader, limit int, args ...string) ([]byte, error) {
	full := append(append([]string{"--no-pager"}, safeConfig...), args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
	cmd.WaitDelay = gitWaitDelay
	out := &limitWriter{max: limit}
	stderr := &limitWriter{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, stderr
	err := cmd.Run()
	switch {
	case out.over:
		return nil, &gitError{args: args, code: -1, err: errOutputLimit}
	case err != nil:
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return out.buf.Bytes(), &gitError{args: args, code: code, stderr: stderr.buf.String(), err: err}
	}
	return out.buf.Bytes(), nil
}
