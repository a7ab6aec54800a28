// This file ranks tools for tool_search: BM25 over the words of each tool's names (weighted)
// and description, with an exact name winning.

package mcp

import (
	"math"
	"sort"
	"strings"
)

// DefaultSearchLimit is how many tools Search returns when limit is 0 or less.
const DefaultSearchLimit = 5

// BM25 parameters, and how many times a word of a tool's names counts against one of its
// description.
const (
	bm25K1     = 1.2
	bm25B      = 0.75
	nameWeight = 3
)

// Index ranks a fixed list of tools for queries. Building it reads every name and
// description once; a query then costs a few microseconds for a thousand tools.
//
// It is immutable after NewIndex and safe for concurrent use.
type Index struct {
	tools  []Tool
	terms  map[string]int32 // word -> id
	post   [][]posting      // by word id: the tools holding it
	docLen []float32        // weighted number of words of each tool
	avgLen float32
	// exact maps a lower-cased Name or Original to the tools that have it.
	exact map[string][]int32
}

type posting struct {
	doc int32
	tf  float32
}

// NewIndex indexes tools (kept, not copied: the caller must not modify them after).
//
// Contract: pure; safe for concurrent use.
func NewIndex(tools []Tool) *Index {
	ix := &Index{
		tools:  tools,
		terms:  make(map[string]int32, 256),
		docLen: make([]float32, len(tools)),
		exact:  make(map[string][]int32, len(tools)*2),
	}
	tk := &tokenizer{}
	var (
		tf      []float32 // by word id, for the tool being read
		touched []int32   // the ids tf holds
		n       float32   // the tool's weighted length
		weight  float32
	)
	add := func(w []byte) {
		id, ok := ix.terms[string(w)]
		if !ok {
			id = int32(len(ix.post))
			ix.terms[string(w)] = id
			ix.post = append(ix.post, nil)
			tf = append(tf, 0)
		}
		if tf[id] == 0 {
			touched = append(touched, id)
		}
		tf[id] += weight
		n += weight
	}
	var total float64
	for i := range tools {
		t := &tools[i]
		n = 0
		// The pid name holds the server's name and the original, split where the server
		// wrote camelCase.
		weight = nameWeight
		tk.words(t.Name, add)
		weight = 1
		tk.words(t.Description, add)
		for _, id := range touched {
			ix.post[id] = append(ix.post[id], posting{doc: int32(i), tf: tf[id]})
			tf[id] = 0
		}
		touched = touched[:0]
		ix.docLen[i] = n
		total += float64(n)
		for _, k := range []string{strings.ToLower(t.Name), strings.ToLower(t.Original)} {
			if k == "" {
				continue
			}
			if l := ix.exact[k]; len(l) == 0 || l[len(l)-1] != int32(i) {
				ix.exact[k] = append(l, int32(i))
			}
		}
	}
	if len(tools) > 0 {
		ix.avgLen = float32(total / float64(len(tools)))
	}
	return ix
}

// Search returns at most limit tools (DefaultSearchLimit when limit <= 0) for query, best
// first: tools whose Name or Original equals the query (ignoring case and surrounding
// space) before all others, then by BM25 score over the query's words; ties keep the
// index's order. Tools that match no word are left out.
//
// Contract: safe for concurrent use; the result is the caller's.
func (ix *Index) Search(query string, limit int) []Tool {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	n := len(ix.tools)
	if n == 0 {
		return nil
	}
	scores := make([]float64, n)
	var hits []int32
	seen := map[int32]bool{}
	(&tokenizer{query: true}).words(query, func(w []byte) {
		id, ok := ix.terms[string(w)]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		post := ix.post[id]
		idf := idfOf(n, len(post))
		for _, p := range post {
			if scores[p.doc] == 0 {
				hits = append(hits, p.doc)
			}
			scores[p.doc] += bm25(idf, p.tf, ix.docLen[p.doc], ix.avgLen)
		}
	})
	for _, d := range ix.exact[strings.ToLower(strings.TrimSpace(query))] {
		if scores[d] == 0 {
			hits = append(hits, d)
		}
		scores[d] = math.Inf(1)
	}
	return ranked(ix.tools, hits, scores, limit)
}

// Search ranks tools for query exactly as NewIndex(tools).Search would, without building
// an index: one pass over the names and descriptions that only looks for the query's
// words (about a millisecond for a thousand tools). A caller that searches the same
// tools many times keeps an Index, whose queries cost microseconds.
//
// Contract: pure; safe for concurrent use; the result is the caller's.
func Search(tools []Tool, query string, limit int) []Tool {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	n := len(tools)
	if n == 0 {
		return nil
	}
	var q [][]byte
	(&tokenizer{query: true}).words(query, func(w []byte) {
		for _, x := range q {
			if string(x) == string(w) {
				return
			}
		}
		q = append(q, append([]byte(nil), w...))
	})
	nq := len(q)
	tf := make([]float32, n*nq)
	docLen := make([]float32, n)
	df := make([]int, nq)
	var (
		row    []float32
		length float32
		weight float32
	)
	add := func(w []byte) {
		length += weight
		if w == nil {
			return
		}
		for j, x := range q {
			if string(x) == string(w) {
				row[j] += weight
				return
			}
		}
	}
	// Only words as long as a query word, or one longer (a plural), can match.
	var lens [maxLen + 1]bool
	for _, x := range q {
		for _, l := range []int{len(x), len(x) + 1} {
			if l <= maxLen {
				lens[l] = true
			}
		}
	}
	var total float64
	tk := &tokenizer{lens: &lens}
	for i := range tools {
		row = tf[i*nq : (i+1)*nq]
		length = 0
		weight = nameWeight
		tk.words(tools[i].Name, add)
		weight = 1
		tk.words(tools[i].Description, add)
		docLen[i] = length
		total += float64(length)
		for j := range row {
			if row[j] > 0 {
				df[j]++
			}
		}
	}
	avgLen := float32(total / float64(n))
	scores := make([]float64, n)
	var hits []int32
	for j := range q {
		if df[j] == 0 {
			continue
		}
		idf := idfOf(n, df[j])
		for i := range tools {
			if f := tf[i*nq+j]; f > 0 {
				if scores[i] == 0 {
					hits = append(hits, int32(i))
				}
				scores[i] += bm25(idf, f, docLen[i], avgLen)
			}
		}
	}
	exact := strings.TrimSpace(query)
	for i := range tools {
		if strings.EqualFold(tools[i].Name, exact) || strings.EqualFold(tools[i].Original, exact) {
			if scores[i] == 0 {
				hits = append(hits, int32(i))
			}
			scores[i] = math.Inf(1)
		}
	}
	return ranked(tools, hits, scores, limit)
}

// idfOf is BM25's inverse document frequency of a word held by df of n tools.
func idfOf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 is the score a word of inverse document frequency idf, weighted tf times in a tool
// of weighted length docLen, gives that tool.
func bm25(idf float64, tf, docLen, avgLen float32) float64 {
	norm := bm25K1 * (1 - bm25B + bm25B*float64(docLen)/float64(avgLen))
	return idf * float64(tf) * (bm25K1 + 1) / (float64(tf) + norm)
}

// ranked returns the tools of hits by score, best first, ties in tools' order, at most
// limit of them.
func ranked(tools []Tool, hits []int32, scores []float64, limit int) []Tool {
	sort.Slice(hits, func(a, b int) bool {
		sa, sb := scores[hits[a]], scores[hits[b]]
		if sa != sb {
			return sa > sb
		}
		return hits[a] < hits[b]
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]Tool, len(hits))
	for i, d := range hits {
		out[i] = tools[d]
	}
	return out
}

// tokenizer splits text into words for the index and the queries. Words are runs of
// letters and digits, lower-cased, with a plural "s" cut; a word written in camelCase is
// given whole and in its parts (createIssue: createissue, create, issue), so both
// spellings find it. With query set, common English words that tell tools apart poorly
// (a, the, of, ...) are left out; documents keep them, for their length.
type tokenizer struct {
	query bool
	// lens, when not nil, lists the lengths of the only words the caller looks for:
	// other words are given as nil (counted, not spelled out).
	lens *[maxLen + 1]bool
	buf  []byte // the current word; valid during f's call only
}

// maxLen is the longest word length lens can hold; longer words are always spelled out.
const maxLen = 63

// byteClass tells the bytes of words apart: 0 a separator, 1 a lower-case letter, a
// digit or a byte of a multi-byte character, 2 an upper-case letter.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = 2
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80:
			t[c] = 1
		}
	}
	return t
}()

// words calls f with each word of s.
func (tk *tokenizer) words(s string, f func([]byte)) {
	start := -1
	for i := 0; i < len(s); i++ {
		isWord := byteClass[s[i]] != 0
		switch {
		case isWord && start < 0:
			start = i
		case !isWord && start >= 0:
			tk.word(s[start:i], f)
			start = -1
		}
	}
	if start >= 0 {
		tk.word(s[start:], f)
	}
}

// word gives w, and its camelCase parts when it has some.
func (tk *tokenizer) word(w string, f func([]byte)) {
	tk.emit(w, f)
	from := 0
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			tk.emit(w[from:i], f)
			from = i
		}
	}
	if from > 0 {
		tk.emit(w[from:], f)
	}
}

func (tk *tokenizer) emit(w string, f func([]byte)) {
	if tk.lens != nil && len(w) <= maxLen && !tk.lens[len(w)] {
		f(nil)
		return
	}
	b := tk.buf[:0]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	tk.buf = b
	if n := len(b); n > 3 && b[n-1] == 's' && b[n-2] != 's' && b[n-2] != 'u' && b[n-2] != 'i' {
		b = b[:n-1]
	}
	if tk.query && stopWord(b) {
		return
	}
	f(b)
}

// stopWord reports whether w is one of the few words left out of queries.
func stopWord(w []byte) bool {
	switch string(w) {
	case "a", "an", "the", "of", "to", "and", "or", "for", "in", "on", "with", "by", "from",
		"is", "it", "its", "this", "that", "be", "as", "at", "mcp":
		return true
	}
	return false
}
