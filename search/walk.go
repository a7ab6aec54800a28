// This file walks a folder tree (Walk) for grep, find and Scan: folders are listed, and
// files searched, by a small pool of goroutines, while the caller sees every entry in one
// stable order (depth first, in name order); it skips .git and what ignore files exclude,
// never follows symbolic links, and goes through a directory handle (an os.Root) per folder
// so that the walk cannot leave the workspace folder. It loads the ignore files (ignore.go),
// leaving out (and reporting) any that is not a small regular file. List lists one folder.

package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pid-agent/pid/internal/rootfile"
)

// unknownType stands for a file type not known yet.
const unknownType = ^fs.FileMode(0)

// Entry is one entry of a folder: its name, and its type bits (0 for a regular file,
// fs.ModeDir, fs.ModeSymlink...) as the folder records them, or from an lstat relative to
// the folder when the file system does not record them.
type Entry struct {
	Name string
	Type fs.FileMode
}

// List returns the entries of the folder dir is open on, sorted by name, without a stat
// per entry (readFolder); nothing here looks a path up from the top.
func List(dir *os.Root) ([]Entry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := readFolder(f, dir)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// readFolderDup returns the entries of the open folder f, unsorted, read through a second
// descriptor on it (see rootfile.Dup) so that no entry costs a stat.
func readFolderDup(f *os.File) ([]Entry, error) {
	rd := f
	if g, err := rootfile.Dup(f, f.Name()); err == nil {
		defer g.Close()
		rd = g
	}
	des, err := rd.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(des))
	for i, d := range des {
		out[i] = Entry{Name: d.Name(), Type: d.Type()} // never d.Info(): it would stat by path
	}
	return out, nil
}

// Spec says what a walk does besides listing; R is what Work finds in a file.
type Spec[R any] struct {
	// Want reports whether Work should run for the entry (a file or anything but a folder);
	// nil means never. Called from the walk's goroutines, concurrently.
	Want func(n *Node) bool
	// Work does the per-file work (grep's search) for an entry Want chose, in the folder d
	// (valid during the call only), and returns what Visit gets. Called from the walk's
	// goroutines, concurrently; it must return promptly once the walk's context is done.
	Work func(d Dir, n *Node) R
	// Inline runs Work for a folder's files in the goroutine that listed the folder, right
	// after the listing, instead of as tasks of their own: for work as small as a stat,
	// where a task's handoff between goroutines would cost more than the work.
	Inline bool
	// Visit is called for every entry the walk does not skip, in walk order (depth first,
	// in name order; a folder before its content), on the caller's goroutine, one call at a
	// time, with Work's result (R's zero value when Work did not run). Returning fs.SkipAll
	// ends the walk without error; another error ends it with that error.
	Visit func(n *Node, res R) error
}

// Dir is the folder holding a file Work runs for, valid during that call only.
type Dir struct {
	Root *os.Root // an os.Root on the folder
	file *os.File // its open ".", when the walk keeps one (a walk that is not Inline)
	fd   int      // its descriptor, when fdOK (inline work)
	fdOK bool
}

// walkSpec is a Spec with Work's results held as any, so that the walk's own types are not
// generic.
type walkSpec struct {
	// want reports whether work should run for the entry (a file or anything but a folder);
	// nil means never. Called from the walk's goroutines, concurrently.
	want func(n *Node) bool
	// work does the per-file work (grep's search) for an entry want chose, in dir (an
	// os.Root on the folder holding it, valid during the call only), and returns what
	// visit gets. Called from the walk's goroutines, concurrently; it must return promptly
	// once the walk's context is done.
	work func(d Dir, n *Node) any
	// inline runs work for a folder's files in the goroutine that listed the folder, right
	// after the listing, instead of as tasks of their own: for work as small as a stat,
	// where a task's handoff between goroutines would cost more than the work.
	inline bool
	// visit is called for every entry the walk does not skip, in walk order (depth first,
	// in name order; a folder before its content), on the caller's goroutine, one call at a
	// time, with work's result (nil when work did not run). Returning fs.SkipAll ends the
	// walk without error; another error ends it with that error.
	visit func(n *Node, res any) error
}

// Node is one entry of the tree being walked. Folders and wanted files are tasks: run
// once, by a pool goroutine or by the consumer (which takes a task no goroutine has
// started rather than wait for one), then done is closed.
type Node struct {
	parent    *Node
	real, rel string // a folder's (a file's are built on demand: path, relPath)
	e         Entry
	isDir     bool
	task      bool          // a folder, or a file work runs for
	inline    bool          // a file work runs for in its folder's listing (walkSpec.inline)
	claimed   atomic.Bool   // set by whoever runs the task
	done      chan struct{} // closed when the task has run
	tokened   bool          // run by a pool goroutine holding a run-ahead token
	stack     ignoreStack   // a folder's: the ignore files that apply to its entries
	children  []*Node       // a folder's entries, once listed, in name order
	skipped   []SkippedFile // a folder's ignore files left out
	res       any           // a file's: what work returned
	root      *os.Root      // a folder's handle, while tasks still need it
	dirf      *os.File      // a folder's open "." (for a walk with work), closed with root
	refs      atomic.Int32  // a folder's: tasks still needing root, plus its own
	rootErred bool          // a folder's: it could not be opened or listed
	// fd is a folder's open descriptor while inline work runs on its files (fdOK set).
	fd   int
	fdOK bool
}

// Name returns the entry's name.
func (n *Node) Name() string { return n.e.Name }

// Type returns the entry's type bits as its folder records them (0 for a regular file).
func (n *Node) Type() fs.FileMode { return n.e.Type }

// IsDir reports whether the entry is a folder (a symbolic link never is).
func (n *Node) IsDir() bool { return n.isDir }

// Path returns the entry's real path.
func (n *Node) Path() string {
	if n.parent == nil || n.real != "" {
		return n.real
	}
	if n.parent.real == "/" {
		return "/" + n.e.Name
	}
	return n.parent.real + "/" + n.e.Name
}

// Rel returns the entry's slash-separated path from the walk's start.
func (n *Node) Rel() string {
	if n.parent == nil || n.rel != "" {
		return n.rel
	}
	if n.parent.rel == "" {
		return n.e.Name
	}
	return n.parent.rel + "/" + n.e.Name
}

// walker is one walk's state.
type walker struct {
	fence   Fence
	ctx     context.Context
	spec    walkSpec
	global  *ignoreSource // git's global excludes file, or nil
	stop    atomic.Bool
	tokens  chan struct{} // run-ahead bound: one per task a pool goroutine has run but the consumer has not reached
	halt    chan struct{} // closed when the walk stops
	skipped []SkippedFile

	// mu guards the task stack and the folder handles still open.
	mu    sync.Mutex
	cond  *sync.Cond
	tasks []*Node // LIFO: pushed in reverse name order, so popping follows walk order
	shut  bool
	open  map[*Node]struct{} // folders whose handles are open
}

// walkRunAhead bounds how many tasks the pool runs ahead of the consumer: the memory a
// walk holds is bounded by it, not by the tree.
const walkRunAhead = 1024

// walkWorkers is how many pool goroutines a walk starts.
func walkWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 16)) }

// Walk visits everything under the folder start (a real path inside f), as spec says. It
// skips .git and entries ignored by the ignore files of start, of its subfolders and of its
// parents (up to the folder of f holding it; see parentIgnores). Symbolic links are visited but not
// followed; folders that cannot be read are skipped. Each folder is opened from its
// parent's handle by name, and its files are opened from its own handle, so no path is
// resolved again from the top and a link swapped in cannot lead the walk outside. It
// returns the ignore files it left out, and stops with ctx's error when ctx is done. Every
// goroutine it starts has ended when it returns.
func Walk[R any](ctx context.Context, f Fence, start string, spec Spec[R]) ([]SkippedFile, error) {
	ws := walkSpec{want: spec.Want, inline: spec.Inline, visit: func(n *Node, res any) error {
		r, _ := res.(R) // the zero R when Work did not run
		return spec.Visit(n, r)
	}}
	if spec.Work != nil {
		ws.work = func(d Dir, n *Node) any { return spec.Work(d, n) }
	}
	return walk(ctx, f, start, ws)
}

// walk is Walk with Work's results as any.
func walk(ctx context.Context, f Fence, start string, spec walkSpec) ([]SkippedFile, error) {
	r, rel, err := f.At(start)
	if err != nil {
		return nil, err
	}
	root, err := r.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	w := &walker{fence: f, ctx: ctx, spec: spec, tokens: make(chan struct{}, walkRunAhead),
		halt: make(chan struct{}), open: map[*Node]struct{}{}}
	w.cond = sync.NewCond(&w.mu)
	w.global = loadGlobalExcludes()
	top := &Node{real: start, isDir: true, task: true, done: make(chan struct{}), root: root}
	w.open[top] = struct{}{}
	top.stack = w.parentIgnores(start)
	var wg sync.WaitGroup
	for range walkWorkers() {
		wg.Go(w.work)
	}
	err = w.consume(top)
	w.stop.Store(true)
	close(w.halt)
	w.mu.Lock()
	w.shut = true
	w.cond.Broadcast()
	w.mu.Unlock()
	wg.Wait()
	for n := range w.open {
		n.closeHandles()
	}
	if errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return w.skipped, err
}

// work is a pool goroutine: it runs tasks from the stack until the walk stops.
func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.tasks) == 0 && !w.shut {
			w.cond.Wait()
		}
		if w.shut {
			w.mu.Unlock()
			return
		}
		n := w.tasks[len(w.tasks)-1]
		w.tasks = w.tasks[:len(w.tasks)-1]
		w.mu.Unlock()
		select {
		case w.tokens <- struct{}{}:
		case <-w.halt:
			return
		}
		if !n.claimed.CompareAndSwap(false, true) {
			<-w.tokens // the consumer took it
			continue
		}
		n.tokened = true
		w.run(n)
	}
}

// await returns once n's task has run, running it here when no goroutine has started it,
// or ctx's error when ctx is done first.
func (w *walker) await(n *Node) error {
	if n.claimed.CompareAndSwap(false, true) {
		w.run(n)
	}
	select {
	case <-n.done:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	if n.tokened {
		<-w.tokens
	}
	return nil
}

// consume visits the entries of the folder n in walk order, descending into subfolders.
func (w *walker) consume(n *Node) error {
	if err := w.await(n); err != nil {
		return err
	}
	w.skipped = append(w.skipped, n.skipped...)
	kids := n.children
	n.children = nil // what was visited is let go: memory follows the run-ahead, not the tree
	for i, c := range kids {
		kids[i] = nil
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if c.task && !c.isDir {
			if err := w.await(c); err != nil {
				return err
			}
		}
		if err := w.spec.visit(c, c.res); err != nil {
			return err
		}
		if c.isDir {
			if err := w.consume(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// run runs the task n: lists a folder or does a file's work.
func (w *walker) run(n *Node) {
	defer close(n.done)
	if w.stop.Load() || w.ctx.Err() != nil {
		if n.parent != nil {
			w.release(n.parent)
		}
		return
	}
	if !n.isDir {
		n.res = w.spec.work(Dir{Root: n.parent.root, file: n.parent.dirf}, n)
		w.release(n.parent)
		return
	}
	if n.parent != nil {
		// OpenRoot refuses a link swapped in for the folder if it leads out of the parent.
		root, err := n.parent.root.OpenRoot(n.e.Name)
		w.release(n.parent)
		if err != nil {
			n.rootErred = true
			return
		}
		w.mu.Lock()
		w.open[n] = struct{}{}
		w.mu.Unlock()
		n.root = root
	}
	w.list(n)
}

// release drops one use of the folder n's handle, closing it after the last.
func (w *walker) release(n *Node) {
	if n.refs.Add(-1) != 0 {
		return
	}
	w.mu.Lock()
	delete(w.open, n)
	w.mu.Unlock()
	n.closeHandles()
}

// closeHandles closes the folder n's handles.
func (n *Node) closeHandles() {
	if n.dirf != nil {
		n.dirf.Close()
	}
	n.root.Close()
}

// list lists the folder n, applies its ignore files, and queues the tasks of its entries.
func (w *walker) list(n *Node) {
	n.refs.Store(1)
	defer w.release(n)
	// O_NONBLOCK: an *os.File opened without it switches the descriptor to non-blocking
	// and back around its (failing) poller registration, four fcntl calls per folder.
	f, err := n.root.OpenFile(".", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		n.rootErred = true
		return
	}
	entries, err := readFolder(f, n.root)
	if err == nil {
		slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	}
	if err != nil {
		f.Close()
		n.rootErred = true
		return
	}
	if w.spec.work != nil && !w.spec.inline {
		n.dirf = f // work opens the folder's files through it
	} else {
		defer f.Close()
	}
	stack := w.folderIgnores(n, entries)
	slab := make([]Node, len(entries)) // one allocation for the folder's nodes
	kids := make([]*Node, 0, len(entries))
	tasks := 0
	for _, e := range entries {
		if e.Name == ".git" {
			continue
		}
		isDir := e.Type.IsDir() // false for a symbolic link, whatever it points to
		if stack.ignoredIn(n.real, e.Name, isDir) {
			continue
		}
		k := &slab[len(kids)]
		k.parent, k.e, k.isDir = n, e, isDir
		if isDir {
			k.real, k.rel = k.Path(), k.Rel()
			k.task, k.stack = true, stack
		} else if w.spec.want != nil && w.spec.want(k) {
			k.task, k.inline = !w.spec.inline, w.spec.inline
		}
		if k.task {
			k.done = make(chan struct{})
			tasks++
		}
		kids = append(kids, k)
	}
	n.children = kids
	if w.spec.inline {
		w.inlineWork(n, f, kids)
	}
	if tasks == 0 {
		return
	}
	n.refs.Add(int32(tasks))
	w.mu.Lock()
	for i := len(kids) - 1; i >= 0; i-- {
		if kids[i].task {
			w.tasks = append(w.tasks, kids[i])
		}
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// inlineWork runs work, in this goroutine, for the files of the folder n (open as f) that
// list marked; n.fd is f's descriptor meanwhile. It stops early when the walk stops.
func (w *walker) inlineWork(n *Node, f *os.File, kids []*Node) {
	each := func() {
		for i, k := range kids {
			if i%64 == 0 && (w.stop.Load() || w.ctx.Err() != nil) {
				return
			}
			if !k.inline {
				continue
			}
			k.res = w.spec.work(Dir{Root: n.root, fd: n.fd, fdOK: n.fdOK}, k)
		}
	}
	if rc, err := f.SyscallConn(); err == nil && rc.Control(func(fd uintptr) {
		n.fd, n.fdOK = int(fd), true
		each()
		n.fdOK = false
	}) == nil {
		return
	}
	each()
}
