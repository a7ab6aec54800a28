package watch

// Tests of the shared watcher: events reach exactly the subscribers of a folder, under their
// spelling; folders are reference-counted; a closed subscriber hears nothing more; and the
// watcher's goroutine ends with the last subscriber (goleak checks it after every test).
// Nothing sleeps: tests wait for events with a deadline, and prove that an event did not
// reach someone by a later event on the same watcher, which comes after it.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder collects a subscriber's event names.
type recorder struct{ names chan string }

func newRecorder() *recorder { return &recorder{names: make(chan string, 1024)} }

func (r *recorder) on(ev fsnotify.Event) {
	select {
	case r.names <- ev.Name:
	default:
	}
}

// waitFor waits until the recorder has seen name, and returns the names seen before it.
func (r *recorder) waitFor(t *testing.T, name string) []string {
	t.Helper()
	var before []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case n := <-r.names:
			if n == name {
				return before
			}
			before = append(before, n)
		case <-deadline:
			t.Fatalf("no event for %s; saw %v", name, before)
		}
	}
}

// drained returns what the recorder holds now, without waiting.
func (r *recorder) drained() []string {
	var out []string
	for {
		select {
		case n := <-r.names:
			out = append(out, n)
		default:
			return out
		}
	}
}

func subscribe(t *testing.T, r *recorder) *Sub {
	t.Helper()
	s, err := Subscribe(r.on, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two subscribers of one folder both hear about it; a subscriber of another folder does
// not; once one of the two closes, the other still hears (the folder stays watched) and
// the closed one hears nothing.
func TestEventsReachTheFoldersSubscribers(t *testing.T) {
	d1, d2 := realTemp(t), realTemp(t)
	ra, rb, rc := newRecorder(), newRecorder(), newRecorder()
	a, b, c := subscribe(t, ra), subscribe(t, rb), subscribe(t, rc)
	for _, x := range []struct {
		s   *Sub
		dir string
	}{{a, d1}, {b, d1}, {c, d2}} {
		if err := x.s.Add(x.dir); err != nil {
			t.Fatal(err)
		}
	}
	touch(t, filepath.Join(d1, "one"))
	ra.waitFor(t, filepath.Join(d1, "one"))
	rb.waitFor(t, filepath.Join(d1, "one"))
	touch(t, filepath.Join(d2, "two"))
	if before := rc.waitFor(t, filepath.Join(d2, "two")); len(before) != 0 {
		t.Errorf("the subscriber of %s heard about %v", d2, before)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	ra.drained()
	touch(t, filepath.Join(d1, "three"))
	rb.waitFor(t, filepath.Join(d1, "three"))
	// One more event, so the delivery of "three" to everyone is over.
	touch(t, filepath.Join(d1, "four"))
	rb.waitFor(t, filepath.Join(d1, "four"))
	if got := ra.drained(); len(got) != 0 {
		t.Errorf("a closed subscriber heard %v", got)
	}
}

// A subscriber's Remove leaves the folder to the others; the last Remove stops its events.
func TestFoldersAreReferenceCounted(t *testing.T) {
	d, other := realTemp(t), realTemp(t)
	ra, rb := newRecorder(), newRecorder()
	a, b := subscribe(t, ra), subscribe(t, rb)
	for _, s := range []*Sub{a, b} {
		if err := s.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(other); err != nil {
		t.Fatal(err)
	}
	a.Remove(d)
	touch(t, filepath.Join(d, "x"))
	rb.waitFor(t, filepath.Join(d, "x"))
	b.Remove(d)
	touch(t, filepath.Join(d, "y"))
	// The event in other comes after any event of y would have.
	touch(t, filepath.Join(other, "z"))
	if before := rb.waitFor(t, filepath.Join(other, "z")); slices.Contains(before, filepath.Join(d, "y")) {
		t.Errorf("an event of a folder no one watches: %v", before)
	}
	if got := ra.drained(); slices.Contains(got, filepath.Join(d, "x")) || slices.Contains(got, filepath.Join(d, "y")) {
		t.Errorf("a subscriber that removed the folder heard %v", got)
	}
}

// Events come under the spelling the subscriber used, a symbolic link included, even when
// another subscriber watches the same folder by its real path.
func TestEventsUseTheSubscribersSpelling(t *testing.T) {
	real := realTemp(t)
	link := filepath.Join(realTemp(t), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	rl, rr := newRecorder(), newRecorder()
	l, r := subscribe(t, rl), subscribe(t, rr)
	if err := l.Add(link); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(real); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(real, "f"))
	rl.waitFor(t, filepath.Join(link, "f"))
	rr.waitFor(t, filepath.Join(real, "f"))
}

// The kernel drops the watch of a folder that is removed; adding the folder again once it
// is back re-arms it, even though other subscribers still hold it.
func TestAddAgainRearms(t *testing.T) {
	parent := realTemp(t)
	d := filepath.Join(parent, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	ra, rb := newRecorder(), newRecorder()
	a, b := subscribe(t, ra), subscribe(t, rb)
	for _, s := range []*Sub{a, b} {
		if err := s.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	ra.waitFor(t, d) // its own removal
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(d); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(d, "again"))
	ra.waitFor(t, filepath.Join(d, "again"))
	rb.waitFor(t, filepath.Join(d, "again"))
}

// Add after Close fails and watches nothing; Close twice is fine.
func TestClosedSubscription(t *testing.T) {
	r := newRecorder()
	s := subscribe(t, r)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Add(t.TempDir()); err == nil {
		t.Fatal("Add after Close succeeded")
	}
}

// A folder that cannot be watched is an error for that Add only.
func TestAddMissingFolder(t *testing.T) {
	r := newRecorder()
	s := subscribe(t, r)
	if err := s.Add(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Add of a missing folder succeeded")
	}
	d := realTemp(t)
	if err := s.Add(d); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(d, "f"))
	r.waitFor(t, filepath.Join(d, "f"))
}
