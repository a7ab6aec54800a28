package tools

// The jobs' ring buffer: what it keeps, what it says it dropped, and its wake-ups.

import (
	"bytes"
	"testing"
)

func TestRingKeepsTheLastBytes(t *testing.T) {
	r := newRing(8)
	_, _, _, changed := r.since(0)
	r.write([]byte("abcde"))
	select {
	case <-changed:
	default:
		t.Fatal("a write did not wake the waiter")
	}
	data, dropped, end, _ := r.since(0)
	if string(data) != "abcde" || dropped != 0 || end != 5 {
		t.Fatalf("since(0) = %q, %d, %d", data, dropped, end)
	}
	r.write([]byte("fghij")) // wraps: "cdefghij" kept
	data, dropped, end, _ = r.since(0)
	if string(data) != "cdefghij" || dropped != 2 || end != 10 {
		t.Fatalf("after the wrap, since(0) = %q, %d, %d", data, dropped, end)
	}
	data, dropped, _, _ = r.since(7)
	if string(data) != "hij" || dropped != 0 {
		t.Fatalf("since(7) = %q, %d", data, dropped)
	}
	big := bytes.Repeat([]byte("x"), 20)
	big[19] = 'y'
	r.write(big) // larger than the ring: only its last 8 bytes
	data, dropped, end, _ = r.since(10)
	if string(data) != "xxxxxxxy" || dropped != 12 || end != 30 || r.size() != 30 {
		t.Fatalf("after a write larger than the ring: %q, %d, %d, size %d", data, dropped, end, r.size())
	}
	if data, _, _, _ := r.since(30); len(data) != 0 {
		t.Fatalf("since(end) = %q", data)
	}
}
