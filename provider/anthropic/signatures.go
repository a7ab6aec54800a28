// This file remembers the signatures of thinking blocks, which llm.Content has no field
// for, so thinking the model did can be sent back with its signature on the next turn.

package anthropic

import (
	"crypto/sha256"
	"sync"
)

// signatureMemory is how many thinking signatures a provider remembers; the oldest is
// forgotten first. A forgotten one only means that thinking block goes back as text.
const signatureMemory = 1024

// signatures maps the text of a thinking block (by its SHA-256) to its signature.
type signatures struct {
	mu    sync.Mutex
	m     map[[32]byte]string
	order [][32]byte // insertion order, a ring of len limit
	next  int
}

func newSignatures(limit int) *signatures {
	return &signatures{m: make(map[[32]byte]string), order: make([][32]byte, 0, limit)}
}

// put remembers sig as the signature of thinking.
func (s *signatures) put(thinking, sig string) {
	if sig == "" || cap(s.order) == 0 {
		return
	}
	k := sha256.Sum256([]byte(thinking))
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; !ok {
		if len(s.order) < cap(s.order) {
			s.order = append(s.order, k)
		} else {
			delete(s.m, s.order[s.next])
			s.order[s.next] = k
			s.next = (s.next + 1) % len(s.order)
		}
	}
	s.m[k] = sig
}

// get returns the signature remembered for thinking.
func (s *signatures) get(thinking string) (string, bool) {
	k := sha256.Sum256([]byte(thinking))
	s.mu.Lock()
	defer s.mu.Unlock()
	sig, ok := s.m[k]
	return sig, ok
}
