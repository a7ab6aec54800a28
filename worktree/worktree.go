// Package worktree gives a writing subagent a git worktree of its own, so that children
// running at once never write each other's files, and brings its work back: when the child
// ends, each file it changed is merged into the main tree (three-way, as git merge-file
// does), the children in the order they finish, and a file that conflicts is left as it is
// in the main tree and reported with its conflicting hunks.
//
// The worktree starts from the main tree as it is: its HEAD plus its uncommitted changes
// (tracked and untracked files that are not ignored, deletions, binary files, modes), and
// the main tree's index and files are never touched to get there: a copy of the main index
// takes the working files (git add -A into the copy, git write-tree), and the worktree,
// made with git worktree add --no-checkout on a branch pid/<id> at HEAD, is filled from
// that tree (git read-tree -u), its index then set to the main tree's staged state, so that
// git status in it shows what it shows in the main tree. The start tree is kept under
// refs/pid/start/<id> until the worktree is removed (so that git gc cannot take it).
//
// Everything runs through the git command line (git.go says how a repository's own
// configuration is kept from starting a program). The entry points are Create and
// (*Tree).Merge; Discard removes a worktree without merging it.
package worktree

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrNotRepo is wrapped by Create's error when the folder cannot have a worktree: it is
// not in a git work tree (or git is missing, or the repository is bare, or has no commit
// yet). The caller falls back to running the child in the main tree.
var ErrNotRepo = errors.New("not in a git repository with a commit")

// ErrTooMany is wrapped by Create's error when the main tree's untracked files are more
// than the limits (MaxUntrackedFiles, MaxUntrackedBytes) allow copying into a worktree.
var ErrTooMany = errors.New("too many untracked files for a worktree")

// Limits of the main tree's untracked files (not ignored) a worktree copies.
const (
	MaxUntrackedFiles = 20000
	MaxUntrackedBytes = 512 << 20
)

// BranchPrefix starts the branch of each worktree: pid/<id>.
const BranchPrefix = "pid/"

// startRefPrefix starts the ref that keeps a worktree's start tree.
const startRefPrefix = "refs/pid/start/"

// idRE is what a child's id may be (a branch name's last part, a folder name).
var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// Options say where to make a worktree and for whom.
type Options struct {
	// Folder is the main tree's folder the child would work in (absolute): the session's
	// workspace folder, in a git work tree (at its top or below it).
	Folder string
	// Dir is the worktree's folder, which must not exist yet (its parents are made, mode
	// 0700): the wiring passes $XDG_STATE_HOME/pid/worktrees/<session>/<child>. Temporary
	// index files are made beside it, in its parent.
	Dir string
	// ID is the child's id ([A-Za-z0-9_-], at most 128): the branch is pid/<ID>.
	ID string
}

// repo is a main tree: its top folder and git folders, and the configuration its git
// commands get.
type repo struct {
	// top is the work tree's top folder (real path); common its common git folder.
	top, common string
	// index is the main tree's index file.
	index string
	// head is HEAD's commit when the worktree was made.
	head string
	// config switches off the filter drivers the repository's own configuration defines.
	config [][2]string
}

// env returns the repository's git environment with extra.
func (r *repo) env(extra ...string) []string { return gitEnv(r.config, extra...) }

// Tree is a child's worktree.
type Tree struct {
	// Path is the worktree's top folder.
	Path string
	// Folder is the child's workspace folder in it: Path, or the place of Options.Folder
	// below the main tree's top.
	Folder string
	// Branch is its branch, pid/<id>.
	Branch string

	repo  *repo
	id    string
	rel   string // Options.Folder relative to the main tree's top ("" at the top)
	start string // the start state's tree
	tmp   string // the folder temporary index files go in
}

// Create makes the worktree of a child: at o.Dir, on the branch pid/<o.ID> at the main
// tree's HEAD, holding the main tree's files as they are now (its uncommitted changes
// included; ignored files are not copied), with an index that is the main tree's staged
// state. The main tree's index and files are not changed.
//
// Contract: safe for concurrent use; it waits while a Merge or another Create of the same
// repository runs. Outside a git work tree (no git, a bare repository, no commit yet) the
// error wraps ErrNotRepo; with too many untracked files it wraps ErrTooMany; either way
// nothing is left behind. It never runs a hook, an fsmonitor or a filter of the
// repository's own configuration.
func Create(ctx context.Context, o Options) (*Tree, error) {
	if !idRE.MatchString(o.ID) {
		return nil, fmt.Errorf("worktree: the child id %q is not [A-Za-z0-9_-]", o.ID)
	}
	if !filepath.IsAbs(o.Folder) || !filepath.IsAbs(o.Dir) {
		return nil, errors.New("worktree: Folder and Dir must be absolute")
	}
	if _, err := os.Lstat(o.Dir); err == nil {
		return nil, fmt.Errorf("worktree: %s exists already", o.Dir)
	}
	r, rel, err := openRepo(ctx, o.Folder)
	if err != nil {
		return nil, err
	}
	unlock, err := lockRepo(ctx, r.common)
	if err != nil {
		return nil, err
	}
	defer unlock()
	tmp := filepath.Dir(o.Dir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	t := &Tree{Path: o.Dir, Folder: filepath.Join(o.Dir, rel), Branch: BranchPrefix + o.ID, repo: r, id: o.ID, rel: rel, tmp: tmp}
	if err := r.checkUntracked(ctx); err != nil {
		return nil, err
	}
	state, staged, err := r.snapshot(ctx, r.top, r.index, tmp, "")
	if err != nil {
		return nil, err
	}
	t.start = state
	if err := t.keepStart(ctx); err != nil {
		return nil, err
	}
	if _, err := git(ctx, r.top, r.env(), nil, 0, "worktree", "add", "--no-checkout", "-b", t.Branch, o.Dir, r.head); err != nil {
		t.dropStart()
		return nil, fmt.Errorf("worktree: %w", err)
	}
	fill := func() error {
		if _, err := git(ctx, o.Dir, r.env(), nil, 0, "read-tree", "--reset", "-u", state); err != nil {
			return err
		}
		_, err := git(ctx, o.Dir, r.env(), nil, 0, "read-tree", "-m", staged)
		return err
	}
	if err := fill(); err != nil {
		_ = t.remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if fi, err := os.Stat(t.Folder); err != nil || !fi.IsDir() {
		// The folder is ignored, or empty: git does not carry it.
		_ = t.remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w: git does not carry the folder %s (ignored, or holding no file git keeps)", ErrNotRepo, o.Folder)
	}
	return t, nil
}

// openRepo finds the repository of folder; rel is folder's place below its top.
func openRepo(ctx context.Context, folder string) (*repo, string, error) {
	real, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return nil, "", fmt.Errorf("worktree: %w", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	env := gitEnv(nil)
	out, err := git(ctx, real, env, nil, 1<<20, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-path", "index")
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return nil, "", fmt.Errorf("%w: git rev-parse said %q", ErrNotRepo, out)
	}
	r := &repo{index: lines[2]}
	if r.top, err = filepath.EvalSymlinks(lines[0]); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	if r.common, err = filepath.EvalSymlinks(lines[1]); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	rel, err := filepath.Rel(r.top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", fmt.Errorf("%w: %s is not inside its work tree %s", ErrNotRepo, folder, r.top)
	}
	if rel == "." {
		rel = ""
	}
	if r.config, err = neutralFilters(ctx, r.top); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	head, err := git(ctx, r.top, r.env(), nil, 1<<10, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return nil, "", fmt.Errorf("%w: HEAD is no commit yet", ErrNotRepo)
	}
	r.head = strings.TrimSpace(string(head))
	return r, rel, nil
}

// neutralFilters returns the configuration that switches off every filter driver that the
// repository's own configuration (local, worktree, or a file they include) defines: its
// clean, smudge and process commands emptied and required off, so that git neither runs
// them nor fails for their absence. The person's global and system drivers (git-lfs) stay.
func neutralFilters(ctx context.Context, top string) ([][2]string, error) {
	out, err := git(ctx, top, gitEnv(nil), nil, 1<<20, "config", "-z", "--show-scope", "--get-regexp", `^filter\.`)
	if err != nil && exitCode(err) != 1 { // 1: no such key
		return nil, err
	}
	var config [][2]string
	seen := map[string]bool{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope, kv := fields[i], fields[i+1]
		if scope == "global" || scope == "system" {
			continue
		}
		key, _, _ := strings.Cut(kv, "\n")
		name := strings.TrimPrefix(key, "filter.")
		dot := strings.LastIndexByte(name, '.')
		if dot <= 0 {
			continue
		}
		driver := name[:dot]
		if seen[driver] {
			continue
		}
		seen[driver] = true
		for _, k := range []string{"clean", "smudge", "process"} {
			config = append(config, [2]string{"filter." + driver + "." + k, ""})
		}
		config = append(config, [2]string{"filter." + driver + ".required", "false"})
	}
	return config, nil
}

// checkUntracked fails with ErrTooMany when the main tree's untracked files (not ignored)
// are more than MaxUntrackedFiles or MaxUntrackedBytes.
func (r *repo) checkUntracked(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"--no-pager"}, safeConfig...), "ls-files", "-z", "--others", "--exclude-standard")...)
	cmd.Dir, cmd.Env = r.top, r.env()
	cmd.WaitDelay = gitWaitDelay
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(splitNUL)
	n, size := 0, int64(0)
	var over error
	for sc.Scan() {
		n++
		if fi, err := os.Lstat(filepath.Join(r.top, sc.Text())); err == nil {
			size += fi.Size()
		}
		if n > MaxUntrackedFiles || size > MaxUntrackedBytes {
			over = fmt.Errorf("worktree: %w: the main tree has more than %d untracked files or %d MiB of them that are not ignored", ErrTooMany, MaxUntrackedFiles, MaxUntrackedBytes>>20)
			cancel()
			break
		}
	}
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if over != nil {
		return over
	}
	if werr != nil {
		return fmt.Errorf("worktree: git ls-files: %w", werr)
	}
	return nil
}

// splitNUL splits a NUL-separated listing.
func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// snapshot returns the tree of the work tree top's files as they are (state: its index
// file index, copied, with git add -A: tracked and untracked files not ignored, deletions,
// modes) and of its index (staged; HEAD's tree when the index has unmerged entries). With
// from set (a child's worktree), the copy is first made to hold exactly the tree from
// (git read-tree --reset, which keeps the stat data of the entries that match, so that only
// changed files are read, and unlike -m does not refuse a file changed on disk): every file of from is then tracked, and one the child's
// .gitignore now ignores is still seen (changed, or deleted) rather than taken for
// deleted; staged is then "". It changes neither the index nor the files: the copy is a
// temporary file in tmp.
func (r *repo) snapshot(ctx context.Context, top, index, tmp, from string) (state, staged string, err error) {
	f, err := os.CreateTemp(tmp, ".pid-index-")
	if err != nil {
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	copyPath := f.Name()
	defer os.Remove(copyPath)
	defer os.Remove(copyPath + ".lock")
	if src, err := os.Open(index); err == nil {
		_, err = io.Copy(f, src)
		src.Close()
		if err != nil {
			f.Close()
			return "", "", fmt.Errorf("worktree: copying the index: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	env := r.env("GIT_INDEX_FILE=" + copyPath)
	if fi, _ := os.Stat(copyPath); fi != nil && fi.Size() == 0 {
		os.Remove(copyPath) // no index: an empty one
	}
	if from != "" {
		if _, err := git(ctx, top, env, nil, 0, "read-tree", "--reset", from); err != nil {
			if _, err := git(ctx, top, env, nil, 0, "read-tree", from); err != nil {
				return "", "", fmt.Errorf("worktree: %w", err)
			}
		}
	} else {
		out, err := git(ctx, top, env, nil, 1<<10, "write-tree")
		if err != nil {
			out, err = git(ctx, top, env, nil, 1<<10, "rev-parse", "--verify", "HEAD^{tree}")
			if err != nil {
				return "", "", fmt.Errorf("worktree: %w", err)
			}
		}
		staged = strings.TrimSpace(string(out))
	}
	if _, err := git(ctx, top, env, nil, 0, "add", "-A", "--", "."); err != nil {
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	out, err := git(ctx, top, env, nil, 1<<10, "write-tree")
	if err != nil {
		return "", "", fmt.Errorf("worktree: %w", err)
	}
	return strings.TrimSpace(string(out)), staged, nil
}

// identity is the author and committer of the commit that keeps a start tree.
var identity = []string{"GIT_AUTHOR_NAME=pid", "GIT_AUTHOR_EMAIL=pid@localhost", "GIT_COMMITTER_NAME=pid", "GIT_COMMITTER_EMAIL=pid@localhost"}

// keepStart points refs/pid/start/<id> at a commit of the start tree (its parent HEAD),
// so that git gc cannot take the start state's objects while the worktree lives.
func (t *Tree) keepStart(ctx context.Context) error {
	r := t.repo
	out, err := git(ctx, r.top, r.env(identity...), nil, 1<<10, "commit-tree", "--no-gpg-sign", "-p", r.head, "-m", "pid: the start of subagent "+t.id, t.start)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	if _, err := git(ctx, r.top, r.env(), nil, 0, "update-ref", startRefPrefix+t.id, strings.TrimSpace(string(out))); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// dropStart deletes the start ref.
func (t *Tree) dropStart() {
	_, _ = git(context.Background(), t.repo.top, t.repo.env(), nil, 0, "update-ref", "-d", startRefPrefix+t.id)
}

// Discard removes the worktree, its branch and its start ref without merging anything
// (a child that was cancelled, or a kept worktree whose conflicts the person is done with).
//
// Contract: safe for concurrent use; it waits while a Create or Merge of the repository
// runs. It fails only when git cannot remove the worktree (it then says why).
func (t *Tree) Discard(ctx context.Context) error {
	unlock, err := lockRepo(ctx, t.repo.common)
	if err != nil {
		return err
	}
	defer unlock()
	return t.remove(ctx)
}

// remove removes the worktree (its folder included), its branch and its start ref.
// Caller holds the repository's lock.
func (t *Tree) remove(ctx context.Context) error {
	r := t.repo
	var errs []error
	if _, err := git(ctx, r.top, r.env(), nil, 0, "worktree", "remove", "--force", "--force", t.Path); err != nil {
		// Gone already, or half made: remove the folder and let git forget it.
		if rmErr := os.RemoveAll(t.Path); rmErr != nil {
			errs = append(errs, err, rmErr)
		}
		if _, err := git(ctx, r.top, r.env(), nil, 0, "worktree", "prune"); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := git(ctx, r.top, r.env(), nil, 0, "branch", "-D", t.Branch); err != nil {
		errs = append(errs, err)
	}
	t.dropStart()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worktree: removing %s: %w", t.Path, err)
	}
	return nil
}

// DiscardDir removes the worktree at dir that an earlier Create made (a kept worktree
// whose Tree is gone: after a restart, or when its session is deleted): the worktree, its
// branch pid/<id> and its start ref. It refuses a folder that is not such a worktree (a
// main work tree, or a worktree on another branch), and a dir that is gone is removed from
// its repository's worktree list by the caller's next git worktree prune, not here.
//
// Contract: safe for concurrent use; it waits while a Create or Merge of the repository
// runs. It never runs the repository's hooks or filters.
func DiscardDir(ctx context.Context, dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	out, err := git(ctx, real, gitEnv(nil), nil, 1<<20, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotRepo, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 || lines[1] == lines[2] {
		return fmt.Errorf("worktree: %s is not a linked worktree", dir)
	}
	if top, _ := filepath.EvalSymlinks(lines[0]); top != real {
		return fmt.Errorf("worktree: %s is not the top of a worktree", dir)
	}
	branch, err := git(ctx, real, gitEnv(nil), nil, 1<<10, "symbolic-ref", "--short", "-q", "HEAD")
	id, ok := strings.CutPrefix(strings.TrimSpace(string(branch)), BranchPrefix)
	if err != nil || !ok || !idRE.MatchString(id) {
		return fmt.Errorf("worktree: %s is not on a branch %s<id>", dir, BranchPrefix)
	}
	common, err := filepath.EvalSymlinks(lines[2])
	if err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	// git runs in the common git folder: it needs no work tree to remove one.
	r := &repo{top: common, common: common}
	if r.config, err = neutralFilters(ctx, real); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	t := &Tree{Path: real, Branch: BranchPrefix + id, repo: r, id: id}
	return t.Discard(ctx)
}
