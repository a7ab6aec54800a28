package checkpoint

import "testing"

// An eviction pass walks every blob once to count them; after that, while the running count
// says the store is under its bound, a pass (one at each prompt's end) walks nothing; once
// puts take the count over the bound, the next pass counts again and evicts.
func TestEnforceKeepsARunningCount(t *testing.T) {
	st, err := Open(t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.put(make([]byte, 300), false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if used, err := st.Enforce(); err != nil || used != 300 {
			t.Fatalf("Enforce: %d %v", used, err)
		}
	}
	if n := st.walks.Load(); n != 1 {
		t.Errorf("%d walks of the blobs for three passes under the bound, want 1", n)
	}
	if _, err := st.put(make([]byte, 800), false); err != nil {
		t.Fatal(err)
	}
	if st.used.Load() != 1100 {
		t.Errorf("running count %d after a put, want 1100", st.used.Load())
	}
	used, err := st.Enforce()
	if err != nil || st.walks.Load() != 2 {
		t.Errorf("a pass over the bound: used %d, err %v, walks %d (want a second walk)", used, err, st.walks.Load())
	}
	if used > 1000 || st.used.Load() != used {
		t.Errorf("after the pass: used %d, running count %d: the unreferenced blobs must go and the count follow", used, st.used.Load())
	}
}

// A workspace cannot make pid write more than twice the bound within one prompt, even before
// the first eviction pass has counted the store (pid's first snapshot of a big workspace).
func TestPutStopsAtTheBound(t *testing.T) {
	st, err := Open(t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.put(make([]byte, 1500), false); err != nil {
		t.Fatal(err)
	}
	if _, err := st.put(append(make([]byte, 600), 1), false); err != errFull {
		t.Errorf("a put past the bound: %v, want errFull", err)
	}
	if _, err := st.put(append(make([]byte, 600), 2), true); err != nil {
		t.Errorf("a rewind's own put (always) must still be kept: %v", err)
	}
}
