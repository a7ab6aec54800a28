// This file decides when an automatic compaction may come again: after one, or after an
// attempt that failed, the context must grow before the threshold is checked again
// (CompactedAt, Counter.Regrown); and holds what a compaction answers (Result).

package compact

// Result is what a compaction made (session/compact's answer).
type Result struct {
	Summary      string `json:"summary"`
	TokensBefore int    `json:"tokensBefore"`
	// FirstKeptIndex is the index, among the session's items, of the first message the
	// model still sees.
	FirstKeptIndex int `json:"firstKeptIndex"`
}

// CompactedAt returns the transcript's length at the last automatic compaction or failed
// attempt of one: the later of tried (the length at the last failed attempt) and lastAt
// (the last compaction's At), 0 for none. That is what a compaction summarized, or could
// not, then. A length past the transcript's length now (length) is not this transcript's
// (a restore started it over): 0.
func CompactedAt(tried, lastAt, length int) int {
	at := max(tried, lastAt)
	if at > length {
		return 0
	}
	return at
}

// Regrown reports whether the transcript of the counter's last Update, length messages long,
// has grown enough since it was at messages long (CompactedAt; 0 for never) for a compaction
// at the threshold: by at least keepRecent tokens (about what a compaction keeps word for
// word, Settings.KeepRecentTokens), and by one message at the least. Until then the
// threshold is not checked again: a compaction just made leaves a context worth less than
// the threshold, by pid's own measure, and a model whose reported usage says otherwise (it
// over-reports, or counts what pid cannot see) would get a compaction before every call. A
// context that really does not fit makes the provider answer an overflow, which compacts
// then.
func (c *Counter) Regrown(at, length, keepRecent int) bool {
	if at == 0 {
		return true
	}
	return at < length && c.Since(at) >= keepRecent
}
