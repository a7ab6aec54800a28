// This file holds what grep's and find's results share: the progress of a search on a big
// tree (how many files it has searched, or entries it has looked at, so far, every
// SearchProgressInterval), and the note naming the ignore files it left out.

package tools

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/search"
)

// SearchProgressInterval is how often a grep or find still running reports its progress.
const SearchProgressInterval = 500 * time.Millisecond

// SearchProgress is the details of a grep or find progress update.
type SearchProgress struct {
	// Files is how many files grep has searched, or how many entries find has looked at.
	Files int64 `json:"files"`
}

// searchProgress sends progress updates from its own goroutine while a search runs.
type searchProgress struct {
	files atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
}

// startProgress starts sending onUpdate, every SearchProgressInterval, a line saying how
// many files (counted with p.files.Add) have been done, worded with what ("searched" or
// "looked at"). onUpdate may be nil: then nothing is sent. The caller calls end before it
// returns.
func startProgress(onUpdate func(event.Result), what string) *searchProgress {
	p := &searchProgress{stop: make(chan struct{})}
	if onUpdate == nil {
		return p
	}
	p.wg.Go(func() {
		t := time.NewTicker(SearchProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				n := p.files.Load()
				onUpdate(event.Result{
					Content: []llm.Content{llm.Text(fmt.Sprintf("[Still searching: %s %s so far.]", what, plural(int(n), "file")))},
					Details: SearchProgress{Files: n},
				})
			}
		}
	})
	return p
}

// end stops the updates and returns once none can be sent any more.
func (p *searchProgress) end() {
	close(p.stop)
	p.wg.Wait()
}

// SkippedFile is a file a search left out, and why: an ignore file that is not a regular
// file, leads outside the workspace or is too big.
type SkippedFile = search.SkippedFile

// maxSkippedListed is how many left-out files a result names in its text.
const maxSkippedListed = 10

// skippedNote returns the lines that tell the model and the user which ignore files were
// left out, or "" when none was.
func skippedNote(skipped []SkippedFile) string {
	var sb strings.Builder
	for i, s := range skipped {
		if i == maxSkippedListed {
			fmt.Fprintf(&sb, "[And %d more ignore files left out.]\n", len(skipped)-i)
			break
		}
		fmt.Fprintf(&sb, "[%s was not applied: %s.]\n", s.Path, s.Reason)
	}
	return sb.String()
}
