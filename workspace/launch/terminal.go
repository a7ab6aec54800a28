// This file makes the command line an editor's terminal runs for a command (an ACP
// client's terminal/*): in the sandbox it is `pid sandbox-exec --holder ...`
// (sandbox.Holder.TerminalArgv), which hands the command to the session's holder, so the
// person watches it in their terminal panel and the sandbox still holds.

package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/sandbox"
)

// terminalsBase returns the folder in which each of the session's holders makes its own
// folder for terminals' commands (sandbox.Holder.ServeTerminals): pid's state folder/t,
// mode 0700 (sandboxed commands cannot see pid's state folder).
func terminalsBase() (string, error) {
	state, err := xdg.StateDir()
	if err != nil {
		return "", err
	}
	base := filepath.Join(state, "t")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	return base, nil
}

// TerminalCommand returns the command line (an absolute program, then its arguments) that
// runs the shell command (shell -c command) in an editor's terminal: in the sandbox,
// through the session's holder, running pid's binary pidPath (an absolute path), unless
// the call escalates (unsandboxed) or the settings turn the sandbox off; then it is `env
// -u NAME... shell -c command`, the client's own environment less what pid keeps from
// every command (the model keys). box is nil for an unsandboxed command; details say how
// it is contained (a sandboxed command's are box's, filled by its CheckAfter and
// ProxyRefusals once it has exited). box's Finish and Spare are not for a terminal's
// command; if the terminal is never created, call box.Abandon.
//
// It fails with the error for the model when the sandbox cannot be given (nothing is to
// run). Safe for concurrent use.
func (l *Launcher) TerminalCommand(shell, command string, unsandboxed bool, who Caller, pidPath string) (argv []string, box *Sandboxed, details *Details, err error) {
	r := l.settings()
	if unsandboxed || r.Mode == sandbox.ModeOff {
		envPath, err := exec.LookPath("env")
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cannot run the command in the editor's terminal: %v", err)
		}
		argv = []string{envPath}
		for _, name := range l.droppedEnv() {
			argv = append(argv, "-u", name)
		}
		argv = append(argv, shell, "-c", command)
		return argv, nil, &Details{Mode: sandbox.ModeOff, Network: true, Escalated: unsandboxed}, nil
	}
	argv = []string{shell, "-c", command}
	s, holder, env, err := l.plan(r, argv, who)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) ([]string, *Sandboxed, *Details, error) {
		s.Abandon()
		return nil, nil, nil, err
	}
	pol, watched, err := s.build()
	if err != nil {
		return fail(failure(err))
	}
	s.pol, s.before = pol, watched
	base, err := terminalsBase()
	if err != nil {
		return fail(fmt.Errorf("the terminals' folder: %w", err))
	}
	if err := holder.ServeTerminals(base); err != nil {
		return fail(fmt.Errorf("the sandbox cannot take the terminal's command: %w", err))
	}
	line, err := holder.TerminalArgv(pidPath, pol, argv, l.ws.Cwd(), env)
	if err != nil {
		return fail(fmt.Errorf("the sandbox cannot take the terminal's command: %w", err))
	}
	return line, s, &s.details, nil
}
