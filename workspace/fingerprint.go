// This file holds what the stale-edit guard compares (stale.go): a Fingerprint of what the
// agent saw of a file, and an Observed file as edit or write find it before changing it,
// with the sha256 helpers both are made with.

package workspace

import (
	"crypto/sha256"
	"hash"
	"time"
)

// Digest is the sha256 of a file's content (or of the part of it read).
type Digest = [sha256.Size]byte

// Fingerprint is what the agent saw of a file, for the stale-edit guard. Most reads, and
// every write and edit, see the whole content: the fingerprint is its sha256
// (WholeFingerprint). A read of the first lines of a large file reads only those, so that
// it costs what was asked and not the file's size; its fingerprint is then the sha256 of
// the N bytes read plus the file's Stamp (device, inode, size, mtime and ctime, as fstat
// gave them before the read). The part not read is vouched for by the stamp alone:
//   - any write to the file, and any rename over it, changes its ctime or inode, and ctime
//     cannot be set back by a program (touch -d sets mtime only), so a stamp that is
//     still the same means the same bytes;
//   - a file system's clock ticks coarsely, so a write in the same tick as the stamp's
//     times could leave them equal: a stamp is only trusted when both times are older than
//     StampSettle when the read starts (git's "racily clean" rule, Stamp.Settled); a file
//     changed more recently is hashed whole, as are files on systems without ctime
//     (StampOf).
//
// What is left: a change with the clock set back by more than StampSettle, or by someone
// able to set ctime (root, through the raw device). The sha256 of the part read is
// checked too, so that part is always compared byte for byte.
type Fingerprint struct {
	Sum Digest // of the whole content, or of its first N bytes
	// N is how many bytes Sum covers when not Whole.
	N int64
	// Whole says Sum is the whole content's; else Stamp vouches for the rest.
	Whole bool
	Stamp Stamp // when not Whole
}

// WholeFingerprint is the fingerprint of content with sha256 sum.
func WholeFingerprint(sum Digest) Fingerprint { return Fingerprint{Sum: sum, Whole: true} }

// StampSettle is how old a file's mtime and ctime must be for its stamp to stand for its
// content (see Fingerprint). A variable for the tests, which set it before any workspace
// reads a file and put it back after.
var StampSettle = 3 * time.Second

// Settled reports whether the stamp's times are at least StampSettle before now: only then
// may it stand for the part of the file not read.
func (s Stamp) Settled(now time.Time) bool {
	limit := now.Add(-StampSettle).UnixNano()
	return s.Mtime < limit && s.Ctime < limit
}

// Observed is a file as edit or write find it before changing it: its whole Content and
// that content's sha256 (Sum), and for a file read from the disk its Stamp taken after
// the content was read (HasStamp).
type Observed struct {
	Content  string
	Sum      Digest
	Stamp    Stamp
	HasStamp bool
}

// Matches reports whether what is there now (o) is what the fingerprint saw: the same
// sha256 for a whole fingerprint; for a partial one, the same stamp and the same sha256 of
// the first N bytes.
func (fp Fingerprint) Matches(o Observed) bool {
	if fp.Whole {
		return o.Sum == fp.Sum
	}
	if !o.HasStamp || o.Stamp != fp.Stamp || int64(len(o.Content)) < fp.N {
		return false
	}
	h := sha256.New()
	HashString(h, o.Content[:fp.N])
	return Digest(h.Sum(nil)) == fp.Sum
}

// HashString writes s to h without converting the whole of it to a []byte (which would
// copy a large file's content once more).
func HashString(h hash.Hash, s string) {
	var buf [32 << 10]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
}

// SumString returns the sha256 of s, without copying s whole.
func SumString(s string) Digest {
	h := sha256.New()
	HashString(h, s)
	return Digest(h.Sum(nil))
}
