package wire_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pid-agent/pid/provider/internal/replay"
	"github.com/pid-agent/pid/provider/internal/wire"
)

// statusServer answers request n (from 0) with answer(n).
func statusServer(t *testing.T, answer func(n int, w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(int(n.Add(1)-1), w)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func get(url string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	}
}

func TestSendRetriesHonouringRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		switch i {
		case 0:
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
		case 1:
			w.Header().Set("Retry-After", now.Add(5*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	var s replay.Sleeps
	resp, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{Attempts: 3, Sleep: s.Sleep, Now: func() time.Time { return now }}, wire.Timeouts{})
	if err != nil || fail != nil {
		t.Fatalf("Send: fail %+v, err %v", fail, err)
	}
	resp.Body.Close()
	if n.Load() != 3 {
		t.Errorf("requests = %d, want 3", n.Load())
	}
	want := []time.Duration{2 * time.Second, 5 * time.Second}
	if got := s.Got(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("waits = %v, want %v (Retry-After in seconds, then as a date)", got, want)
	}
}

func TestSendBackoffWithoutRetryAfter(t *testing.T) {
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadGateway)
	})
	var s replay.Sleeps
	_, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{Attempts: 4, Base: 100 * time.Millisecond, Sleep: s.Sleep}, wire.Timeouts{})
	if err != nil || fail == nil {
		t.Fatalf("want a failure, got fail %v err %v", fail, err)
	}
	if fail.Status != http.StatusBadGateway || fail.Attempts != 4 || n.Load() != 4 {
		t.Errorf("fail = %+v after %d requests, want 502 after 4", fail, n.Load())
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	got := s.Got()
	if len(got) != len(want) {
		t.Fatalf("waits = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("waits = %v, want %v", got, want)
		}
	}
}

func TestSendRetryAfterMs(t *testing.T) {
	srv, _ := statusServer(t, func(i int, w http.ResponseWriter) {
		if i == 0 {
			w.Header().Set("retry-after-ms", "1500")
			w.Header().Set("Retry-After", "9")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	var s replay.Sleeps
	resp, _, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{Sleep: s.Sleep}, wire.Timeouts{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := s.Got(); len(got) != 1 || got[0] != 1500*time.Millisecond {
		t.Errorf("waits = %v, want [1.5s] from retry-after-ms", got)
	}
}

// A wait that would pass MaxWait ends the retries at once, reporting what the server asked.
func TestSendGivesUpWhenTheWaitIsTooLong(t *testing.T) {
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	var s replay.Sleeps
	_, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{MaxWait: time.Minute, Sleep: s.Sleep}, wire.Timeouts{})
	if err != nil || fail == nil {
		t.Fatalf("fail %v err %v", fail, err)
	}
	if n.Load() != 1 || len(s.Got()) != 0 || fail.RetryAfter != 2*time.Minute {
		t.Errorf("%d requests, waits %v, fail %+v; want 1 request, no wait, RetryAfter 2m", n.Load(), s.Got(), fail)
	}
}

func TestSendDoesNotRetry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		body   string
	}{
		{"400", http.StatusBadRequest, nil, ""},
		{"401", http.StatusUnauthorized, nil, ""},
		{"404", http.StatusNotFound, nil, ""},
		{"quota", http.StatusTooManyRequests, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
		{"x-should-retry false", http.StatusInternalServerError, map[string]string{"x-should-retry": "false"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			})
			var s replay.Sleeps
			_, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{Sleep: s.Sleep}, wire.Timeouts{})
			if err != nil || fail == nil || fail.Status != tc.status || string(fail.Body) != tc.body {
				t.Fatalf("fail %+v err %v", fail, err)
			}
			if n.Load() != 1 {
				t.Errorf("requests = %d, want 1", n.Load())
			}
		})
	}
}

func TestSendRetriesOnShouldRetryTrue(t *testing.T) {
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		if i == 0 {
			w.Header().Set("x-should-retry", "true")
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	var s replay.Sleeps
	resp, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{Sleep: s.Sleep}, wire.Timeouts{})
	if err != nil || fail != nil {
		t.Fatalf("fail %v err %v", fail, err)
	}
	resp.Body.Close()
	if n.Load() != 2 {
		t.Errorf("requests = %d, want 2", n.Load())
	}
}

// A cancel during the wait ends Send with the context's error.
func TestSendAbortDuringWait(t *testing.T) {
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	_, fail, err := wire.Send(ctx, srv.Client(), get(srv.URL), wire.Retry{Sleep: sleep}, wire.Timeouts{})
	if err != context.Canceled || fail != nil {
		t.Fatalf("fail %v err %v, want context.Canceled", fail, err)
	}
	if n.Load() != 1 {
		t.Errorf("requests = %d, want 1", n.Load())
	}
}

// The default Sleep: Retry-After 0 retries at once.
func TestSendDefaultSleep(t *testing.T) {
	srv, n := statusServer(t, func(i int, w http.ResponseWriter) {
		if i == 0 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	resp, fail, err := wire.Send(context.Background(), srv.Client(), get(srv.URL), wire.Retry{}, wire.Timeouts{})
	if err != nil || fail != nil {
		t.Fatalf("fail %v err %v", fail, err)
	}
	resp.Body.Close()
	if n.Load() != 2 {
		t.Errorf("requests = %d, want 2", n.Load())
	}
}
