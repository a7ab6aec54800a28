// This file holds Host: what the sessions of one connection share (the workspace folders,
// the settings files, the remembered answers, the audit log), and the errors of the layer.

package session

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/pid-agent/pid/audit"
	"github.com/pid-agent/pid/checkpoint"
	"github.com/pid-agent/pid/commands"
	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/internal/xdg"
	"github.com/pid-agent/pid/loop"
	"github.com/pid-agent/pid/mcp"
	"github.com/pid-agent/pid/modes"
	"github.com/pid-agent/pid/permissions"
	"github.com/pid-agent/pid/redact"
	"github.com/pid-agent/pid/settings"
	"github.com/pid-agent/pid/store"
	"github.com/pid-agent/pid/task"
	"github.com/pid-agent/pid/tools"
	"github.com/pid-agent/pid/trust"
)

// Errors of the layer; a face maps them to its wire's codes with errors.Is.
var (
	// ErrBusy is returned when a prompt, a compaction or a rewind is claimed while another
	// runs in the session (Begin).
	ErrBusy = loop.ErrBusy
	// ErrInvalid wraps a problem with what the client sent (settings, arguments).
	ErrInvalid = errors.New("invalid params")
	// ErrUnknownSession is returned for a session id the host does not know.
	ErrUnknownSession = errors.New("unknown session")
	// ErrNoModel is returned by a prompt in a session with no model.
	ErrNoModel = errors.New(`no model is configured for this session: pass model {provider: "openai" or "anthropic", id: MODEL} in session/new, in initializationOptions or in a settings file (keys come from OPENAI_API_KEY or ANTHROPIC_API_KEY, or the variable named by apiKeyEnv; OPENAI_BASE_URL or baseUrl points at Ollama, vLLM, llama.cpp or LM Studio), or {provider: "script", turns: [...]} for a scripted model`)
	// ErrFailed wraps a request that could not be done for a reason the error text gives
	// (a compaction the model could not make, say).
	ErrFailed = errors.New("request failed")
	// ErrLocked is returned when another live pid holds the session.
	ErrLocked = errors.New("the session is open in another pid")
	// ErrUnavailable is returned when a shared part (the remembered answers) could not be
	// set up; the face has been told why.
	ErrUnavailable = errors.New("not available")
	// ErrResource wraps a request that failed because pid ran out of a system resource
	// (file descriptors, memory): nothing was wrong with what the client sent.
	ErrResource = errors.New("pid is out of resources")
)

// resourceError returns err wrapped in ErrResource, saying what ran out, when it is the
// system refusing a resource (too many open files, in the process or the system; no
// memory); else nil.
func resourceError(what string, err error) error {
	switch {
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("%w: %s: too many open files (pid has as many as its limit allows, see ulimit -n; close sessions with session/close or raise the limit): %w", ErrResource, what, err)
	case errors.Is(err, syscall.ENOMEM):
		return fmt.Errorf("%w: %s: out of memory: %w", ErrResource, what, err)
	}
	return nil
}

// NewID returns a new session id, for a face that must name a session before it exists
// (Options.ID).
func NewID() string { return store.NewID() }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// HostOptions configure a Host.
type HostOptions struct {
	// Log receives what only the daemon's log should see (stacks); nil discards it.
	Log *slog.Logger
	// OwnFolders, when set, makes each session's working folder a workspace folder of its
	// own, as the Agent Client Protocol has it (a client names no workspace folders; each
	// session names its cwd): the session is confined to its cwd, whose settings file is
	// read as a workspace folder's and whose trust is asked. SetUp then gets no folders.
	OwnFolders bool
	// Version is pid's version, which the MCP servers are told; "" tells them none.
	Version string
	// CommandsChanged, if set, is told when a command folder of the host's sessions changed
	// (a command file added, changed or removed): the host watches them (the user's, and
	// each session's workspace folder's) from the first session on. Contract: called from
	// the watch's goroutine, never concurrently; it may read the host's sessions (their
	// Commands) and must not block for long.
	CommandsChanged func()
	// MCPStatus, if set, is told when a server of the host's own manager changes status
	// (the face's mcp/serverStatus), once the sessions that use it have heard. Contract:
	// called from any goroutine, never concurrently for one server, with its latest state;
	// must not block for long nor call back into the Host.
	MCPStatus func(ServerInfo)
	// Report tells the client about a problem with the settings or the shared files
	// (a settings file with an error: severe is true). It may be called from any goroutine,
	// must not block for long and must not call back into the Host.
	Report func(msg string, severe bool)
}

// Host is what the sessions of one connection share. Its methods are safe for concurrent use.
type Host struct {
	opts HostOptions
	log  *slog.Logger

	// Set by SetUp, then only read. Each may be nil when it could not be set up (that was
	// reported).
	loader   *settings.Loader
	store    *permissions.Store
	audit    *audit.Log
	redactor *redact.Redactor
	trust    *trust.Store
	// files keeps the sessions' files; nil when the sessions folder cannot be used (then
	// sessions live in memory only, which was reported).
	files *store.Store
	// checkpoints keeps what the sessions' tools change (checkpoints.go); nil when the
	// user settings turn checkpoints off or the store cannot be used (reported).
	checkpoints *checkpoint.Store

	// commands watches the sessions' command folders (HostOptions.CommandsChanged); nil
	// when the face does not ask. Set by NewHost; it has locks of its own.
	commands *commands.Watcher

	// mu guards the fields below it.
	mu sync.Mutex
	// roots are the workspace folders: the editor's (SetUp), and with OwnFolders each
	// session's own as it is made (they stay: a later session may work there again).
	roots    []string
	sessions map[string]*Session
	// asked holds the roots whose trust question was handed to the face (once per daemon).
	asked map[string]bool
	// trustedHere holds roots trusted for this daemon only, because trust.json could not
	// be written.
	trustedHere map[string]bool
	// mcpm runs the sessions' MCP servers, made on first use.
	mcpm *mcp.Manager
	// reported holds the problems with settings content already reported (reportOnce).
	reported map[string]bool

	// lsp is the language servers of the host's sessions (diagnostics.go; locks of its own).
	lsp lspHost
	// marker is the marker code of instruction files (markers.go), read once.
	marker struct {
		once sync.Once
		code string
	}
}

// NewHost returns a host with no workspace folders; call SetUp before the first session.
func NewHost(opts HostOptions) *Host {
	h := &Host{opts: opts, log: opts.Log, sessions: map[string]*Session{}, asked: map[string]bool{}, trustedHere: map[string]bool{},
		reported: map[string]bool{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.opts.Report == nil {
		h.opts.Report = func(string, bool) {}
	}
	if opts.CommandsChanged != nil {
		changed := opts.CommandsChanged
		h.commands = commands.NewWatcher(func() {
			h.watchSkills() // a skill folder made since is watched from now on
			changed()
		}, h.log)
	}
	return h
}

// folders returns the host's workspace folders now.
func (h *Host) folders() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.roots)
}

// SetUp records the editor's workspace folders, loads the settings files and opens the
// store of remembered answers and the audit log. It first removes the temporary files that
// a pid killed mid-write left in pid's state folder (safefile.CleanTemps: only those of
// processes that are gone). Failures are reported; pid then runs without that part.
//
// Contract: called once, before New, by the face's initialize.
func (h *Host) SetUp(roots []string) {
	if dir, err := xdg.StateDir(); err == nil {
		if n := safefile.CleanTemps(dir); n > 0 {
			h.log.Info("removed temporary files left by a pid that was killed", "folder", dir, "files", n)
		}
	}
	// A folder that does not exist (deleted since the editor opened it) is reported and
	// left out, rather than making every session fail.
	var kept []string
	for _, r := range roots {
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			h.opts.Report(fmt.Sprintf("workspace folder %s is not an existing folder; it is left out", r), false)
			continue
		}
		kept = append(kept, r)
	}
	h.mu.Lock()
	h.roots = kept
	h.mu.Unlock()
	roots = kept
	var err error
	trustBroken := func(err error) {
		h.opts.Report(fmt.Sprintf("trusted folders are not available (every workspace's settings stay narrow-only): %v", err), errors.Is(err, trust.ErrUnsafe))
	}
	// A store that comes back with an error trusts nothing from its file until the file is
	// fixed; a file that turns bad later is reported when it is next read.
	if h.trust, err = trust.Open(""); err != nil {
		trustBroken(err)
	}
	if h.trust != nil {
		h.trust.OnBroken(trustBroken)
	}
	h.loader = settings.NewLoader(settings.LoaderOptions{
		WorkspaceRoots: roots,
		Trusted:        h.trustedRoot,
		OnError: func(path string, err error) {
			if path == "" {
				h.opts.Report(fmt.Sprintf("settings: %v", err), true)
				return
			}
			h.opts.Report(fmt.Sprintf("settings: %s: %v (the previous settings stay in force)", path, err), true)
		},
	})
	// The secrets of pid's environment (the API keys among them) and the keys pid login
	// saved are redacted from tool output in their encodings too: a command can print them
	// base64- or hex-encoded. The saved keys are asked for on each use, so that one saved
	// while pid runs is redacted as soon as a provider can use it.
	h.redactor = redact.NewRedactor(h.loader.RedactPatterns).WithKnown(redact.EnvSecrets(os.Environ())).WithSaved(credentials.Secrets)
	if h.store, err = permissions.OpenStore(""); err != nil {
		h.store = nil
		h.opts.Report(fmt.Sprintf("remembered permissions are not available: %v", err), false)
	}
	if h.files, err = store.Open(""); err != nil {
		h.files = nil
		h.opts.Report(fmt.Sprintf("sessions are not saved (they live until pid stops): %v", err), false)
	} else {
		h.sweepWorktrees()
	}
	h.openCheckpoints()
	if h.audit, err = audit.Open(""); err != nil {
		h.audit = nil
		h.opts.Report(fmt.Sprintf("the audit log is not available: %v", err), false)
	}
}

// Close releases what SetUp and the sessions opened. Contract: called once, after every
// run of every session has ended.
func (h *Host) Close() {
	h.mu.Lock()
	sessions := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	if h.commands != nil {
		h.commands.Close()
	}
	for _, s := range sessions {
		s.stopSessionHooks()
		s.closeFile()
		s.closeMCP(false)
		s.closeCheckpoints()
		s.net.close()
		s.ws.Close()
	}
	h.mu.Lock()
	m := h.mcpm
	h.mu.Unlock()
	if m != nil {
		m.Close()
	}
	h.closeLSP()
	if h.loader != nil {
		h.loader.Close()
	}
	if h.audit != nil {
		h.audit.Close()
	}
}

// Get returns the session with that id.
func (h *Host) Get(id string) (*Session, error) {
	if id == "" {
		return nil, invalid("sessionId is required")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownSession, id)
	}
	return s, nil
}

// Permissions lists the remembered answers (permissions/list).
func (h *Host) Permissions() (permissions.ListResult, error) {
	if h.store == nil {
		return permissions.ListResult{}, fmt.Errorf("%w: remembered permissions (see pid's log)", ErrUnavailable)
	}
	return h.store.List()
}

// Revoke forgets a remembered answer (permissions/revoke). An unknown id is ErrInvalid.
func (h *Host) Revoke(id string) error {
	if id == "" {
		return invalid("id is required")
	}
	if h.store == nil {
		return fmt.Errorf("%w: remembered permissions (see pid's log)", ErrUnavailable)
	}
	var revoked permissions.Remembered
	if l, err := h.store.List(); err == nil {
		for _, e := range l.Permissions {
			if e.ID == id {
				revoked = e
			}
		}
	}
	if err := h.store.Revoke(id); err != nil {
		if errors.Is(err, permissions.ErrUnknownID) {
			return invalid("%v", err)
		}
		return err
	}
	h.forgetHost(revoked)
	return nil
}

// WorkspaceRoots returns the folders of file: URIs as absolute paths.
func WorkspaceRoots(uris []string) ([]string, error) {
	var roots []string
	for _, u := range uris {
		parsed, err := url.Parse(u)
		switch {
		case err != nil:
			return nil, invalid("workspace folder %q: %v", u, err)
		case parsed.Scheme != "file":
			return nil, invalid("workspace folder %q: only file: URIs are supported", u)
		case parsed.Path == "" || !filepath.IsAbs(parsed.Path):
			return nil, invalid("workspace folder %q: the URI has no absolute path", u)
		}
		roots = append(roots, filepath.Clean(parsed.Path))
	}
	return roots, nil
}

// workspace returns a session's workspace: its cwd (default: the first workspace folder,
// else pid's own working folder) confined to the editor's folders (default: the cwd), or
// with OwnFolders to the cwd and the session's extra folders (Options.Folders), each then
// one of the host's folders.
func (h *Host) workspace(cwd string, extra []string) (*tools.Workspace, error) {
	if cwd == "" {
		cwd = h.defaultCwd()
	}
	if !filepath.IsAbs(cwd) {
		return nil, invalid("cwd must be an absolute path, not %q", cwd)
	}
	cwd = filepath.Clean(cwd)
	roots := h.folders()
	if h.opts.OwnFolders {
		roots = []string{cwd}
		for _, f := range extra {
			if !filepath.IsAbs(f) {
				return nil, invalid("additional folder %q is not an absolute path", f)
			}
			f = filepath.Clean(f)
			if fi, err := os.Stat(f); err != nil || !fi.IsDir() {
				return nil, invalid("additional folder %q is not a folder", f)
			}
			if !slices.Contains(roots, f) {
				roots = append(roots, f)
			}
		}
		for _, r := range roots {
			h.addFolder(r)
		}
	}
	ws, err := tools.NewWorkspace(cwd, roots)
	if err != nil {
		if rerr := resourceError("opening the workspace folder", err); rerr != nil {
			return nil, rerr
		}
		return nil, invalid("cwd: %v", err)
	}
	return ws, nil
}

// addFolder makes cwd one of the host's workspace folders (OwnFolders): its settings file is
// read and watched, and its MCP servers see it among the roots.
func (h *Host) addFolder(cwd string) {
	if h.loader != nil {
		h.loader.AddRoot(cwd)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !slices.Contains(h.roots, cwd) {
		h.roots = append(h.roots, cwd)
	}
}

var (
	builtinOnce  sync.Once
	builtinInfos []ToolInfo
)

// BuiltinTools lists the built-in tools every session has.
func BuiltinTools() []ToolInfo {
	builtinOnce.Do(func() {
		builtinInfos = []ToolInfo{}
		ws, err := tools.NewWorkspace(os.TempDir(), nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for _, t := range append(tools.New(ws), todoWriteTool(nil), skillTool(nil), fetchToolSpec(), task.Spec(), modes.ExitPlanSpec()) {
			builtinInfos = append(builtinInfos, info(t))
		}
	})
	return builtinInfos
}
