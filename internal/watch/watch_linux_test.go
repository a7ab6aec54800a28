package watch

// On Linux the watcher is an inotify instance, which shows in /proc/self/fd: these tests
// count them.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pid-agent/pid/internal/proctest"
)

// 300 subscribers, each with a folder of its own and one shared folder, hold one inotify
// instance between them; it is closed when the last one leaves.
func TestOneInstanceForManySubscribers(t *testing.T) {
	if n := proctest.InotifyInstances(t); n != 0 {
		t.Fatalf("%d inotify instances open before the test", n)
	}
	common := realTemp(t)
	subs := make([]*Sub, 300)
	for i := range subs {
		s, err := Subscribe(nil, nil)
		if err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
		subs[i] = s
		dir := filepath.Join(common, "d", string(rune('a'+i%26))+string(rune('a'+i/26)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(dir); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(common); err != nil {
			t.Fatal(err)
		}
	}
	if n := proctest.InotifyInstances(t); n != 1 {
		t.Errorf("300 subscribers hold %d inotify instances, want 1", n)
	}
	for _, s := range subs[:299] {
		s.Close()
	}
	if n := proctest.InotifyInstances(t); n != 1 {
		t.Errorf("with one subscriber left, %d inotify instances are open, want 1", n)
	}
	subs[299].Close()
	if n := proctest.InotifyInstances(t); n != 0 {
		t.Errorf("after the last subscriber left, %d inotify instances are open, want 0", n)
	}
}
