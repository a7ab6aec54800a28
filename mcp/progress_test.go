package mcp

// Progress is throttled as bash's output is: a server flooding a call with notifications
// makes at most one update per ProgressInterval, the latest, and the final state is
// delivered before the call returns.

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pid-agent/pid/event"
	"github.com/pid-agent/pid/tools"
)

// MCP progress is throttled as bash's output is.
func TestProgressIntervalIsBashs(t *testing.T) {
	if ProgressInterval != tools.BashUpdateInterval {
		t.Errorf("ProgressInterval %v, bash's %v", ProgressInterval, tools.BashUpdateInterval)
	}
}

func TestProgressThrottleKeepsTheLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex // the timer delivers on a goroutine of its own
		var seen []float64
		th := newProgressThrottle(func(r event.Result) {
			mu.Lock()
			seen = append(seen, r.Details.(Progress).Progress)
			mu.Unlock()
		}, time.Second)
		updates := func() []float64 {
			mu.Lock()
			defer mu.Unlock()
			return append([]float64(nil), seen...)
		}
		push := func(from, to int) {
			for i := from; i <= to; i++ {
				th.push(&sdk.ProgressNotificationParams{Progress: float64(i)})
			}
		}
		push(1, 1000) // at one instant: the first goes out, the latest is held
		if fmt.Sprint(updates()) != "[1]" {
			t.Fatalf("after 1000 notifications at once: %v, want [1]", updates())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if fmt.Sprint(updates()) != "[1 1000]" {
			t.Fatalf("an interval later: %v, want [1 1000]", updates())
		}
		time.Sleep(2 * time.Second) // idle: the next one goes out at once
		push(1001, 1001)
		push(1002, 1500)
		if fmt.Sprint(updates()) != "[1 1000 1001]" {
			t.Fatalf("after an idle while: %v, want [1 1000 1001]", updates())
		}
		th.finish() // before the interval is over: the held one is delivered now
		if fmt.Sprint(updates()) != "[1 1000 1001 1500]" {
			t.Fatalf("after finish: %v, want the final state 1500 delivered", updates())
		}
		push(1501, 1501)
		time.Sleep(time.Second)
		synctest.Wait()
		if len(updates()) != 4 {
			t.Fatalf("updates after finish: %v", updates())
		}
	})
}

// 3,000 notifications from a real server in one call become a few updates a second, the
// last of them the final state, all before the result.
func TestProgressFloodIsThrottled(t *testing.T) {
	m := newTestManager(t, Options{})
	h := ready(t, m, "test", serverConfig(t))
	const n = 3000
	var mu sync.Mutex
	var got []Progress
	began := time.Now()
	res, err := call(t, h, "progress", fmt.Sprintf(`{"count":%d}`, n), func(r event.Result) {
		mu.Lock()
		got = append(got, r.Details.(Progress))
		mu.Unlock()
	})
	elapsed := time.Since(began)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || text(res) != fmt.Sprintf("sent %d", n) {
		t.Fatalf("progress = %q, %v", text(res), err)
	}
	// One at once, then at most one per interval, and the held one at the end.
	if max := int(elapsed/ProgressInterval) + 2; len(got) > max {
		t.Errorf("%d notifications in %v made %d updates, want at most %d", n, elapsed, len(got), max)
	}
	if len(got) == 0 || got[len(got)-1].Progress != n {
		t.Fatalf("the last update is not the final state %d: %d updates, last %+v", n, len(got), got[len(got)-1:])
	}
	for i := 1; i < len(got); i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Fatalf("update %d (%v) does not follow update %d (%v)", i, got[i].Progress, i-1, got[i-1].Progress)
		}
	}
	t.Logf("%d notifications in %v: %d updates", n, elapsed, len(got))
}
