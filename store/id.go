// This file makes session ids: 25 characters of [0-9a-z], the creation time in milliseconds
// then 80 random bits, so that ids sort by creation time and never collide.

package store

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

const (
	idDigits = "0123456789abcdefghijklmnopqrstuvwxyz"
	// timeDigits base-36 digits hold milliseconds since 1970 until about the year 5188.
	timeDigits = 9
	// halfDigits base-36 digits hold each half of the random part; 36^8 < 2^42.
	halfDigits = 8
	halfMax    = 2821109907456 // 36^8
)

// IDLen is the length of the ids NewID makes.
const IDLen = timeDigits + 2*halfDigits

// idState makes NewID monotonic within the process: an id made in the same millisecond as
// the one before (or after the clock went back) is the one before plus one.
var idState struct {
	// mu guards the fields below.
	mu     sync.Mutex
	ms     int64
	hi, lo uint64
}

// NewID returns a new session id: IDLen (25) characters of [0-9a-z]: 9 for the creation time
// in milliseconds, then 16 random (about 82 bits), so ids sort by creation time as strings
// and are unique across processes and machines. Within a process each id sorts after the one
// before, even in the same millisecond.
//
// Contract: safe for concurrent use; never fails (crypto/rand does not).
func NewID() string {
	idState.mu.Lock()
	ms := time.Now().UnixMilli()
	if ms <= idState.ms {
		ms = idState.ms
		idState.lo++
		if idState.lo == halfMax {
			idState.lo = 0
			idState.hi++
			if idState.hi == halfMax {
				idState.hi = 0
				ms++
			}
		}
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		idState.hi = binary.LittleEndian.Uint64(b[:8]) % halfMax
		idState.lo = binary.LittleEndian.Uint64(b[8:]) % halfMax
	}
	idState.ms = ms
	hi, lo := idState.hi, idState.lo
	idState.mu.Unlock()

	var out [IDLen]byte
	putBase36(out[:timeDigits], uint64(ms))
	putBase36(out[timeDigits:timeDigits+halfDigits], hi)
	putBase36(out[timeDigits+halfDigits:], lo)
	return string(out[:])
}

// putBase36 writes v into dst as fixed-width base 36, most significant digit first.
func putBase36(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = idDigits[v%36]
		v /= 36
	}
}
