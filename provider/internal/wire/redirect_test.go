package wire_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/pid-agent/pid/provider/internal/wire"
)

const redirectKey = "sk-redirect-Hq4Mv9Tz2Rk7Lw3P"

// hopLog is what a server was sent, request by request.
type hopLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	method, path, body string
	header             http.Header
}

func (s *hopLog) add(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, seenRequest{r.Method, r.URL.Path, string(body), r.Header.Clone()})
}

func (s *hopLog) all() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.reqs...)
}

// target is a server that records what it is sent and answers 200 "ok".
func target(t *testing.T, tls bool) (*httptest.Server, *hopLog) {
	var s hopLog
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		io.WriteString(w, "ok")
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &s
}

// redirector is a server that answers its first request at a path with status and a
// Location that to(r) returns, and records what it is sent; later requests get 200 "ok".
func redirector(t *testing.T, tls bool, status int, to func(r *http.Request) string) (*httptest.Server, *hopLog) {
	var s hopLog
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		if loc := to(r); loc != "" {
			http.Redirect(w, r, loc, status)
			return
		}
		io.WriteString(w, "ok")
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &s
}

// keyed posts a body to url with the key in every header a provider could carry it in,
// and a header that holds no key.
func keyed(url string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"model":"m"}`))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "Bearer "+redirectKey)
		r.Header.Set("x-api-key", redirectKey)
		r.Header.Set("api-key", redirectKey)
		r.Header.Set("X-Custom-Auth", "token="+redirectKey)
		r.Header.Set("anthropic-version", "2023-06-01")
		return r, nil
	}
}

func do(t *testing.T, c *http.Client, build func(context.Context) (*http.Request, error)) (*http.Response, error) {
	t.Helper()
	req, err := build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// keyHeaders returns the headers of h that hold the key.
func keyHeaders(h http.Header) []string {
	var out []string
	for k, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, redirectKey) {
				out = append(out, k)
			}
		}
	}
	return out
}

// A 307 to a server on another port: Go's own client would carry Authorization and
// x-api-key there (same host name); the guarded client carries no header with the key,
// and still re-sends the body and the other headers.
func TestRedirectToAnotherPortDropsKey(t *testing.T) {
	b, bSeen := target(t, false)
	a, aSeen := redirector(t, false, http.StatusTemporaryRedirect, func(r *http.Request) string {
		return b.URL + "/v1/messages"
	})

	// The control: net/http alone leaks the key to the other port.
	if _, err := do(t, &http.Client{}, keyed(a.URL+"/v1/messages")); err != nil {
		t.Fatal(err)
	}
	if got := keyHeaders(bSeen.all()[0].header); len(got) != 4 {
		t.Fatalf("control: the unguarded client carried the key in %v, want in all 4 headers (else this test proves nothing)", got)
	}

	c := wire.GuardClient(&http.Client{}, a.URL, redirectKey)
	resp, err := do(t, c, keyed(a.URL+"/v1/messages"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v err %v", resp, err)
	}
	got := bSeen.all()[1]
	if leaked := keyHeaders(got.header); len(leaked) != 0 {
		t.Errorf("the other port was sent the key in %v", leaked)
	}
	if got.method != http.MethodPost || got.body != `{"model":"m"}` || got.header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("the other port got %s %q with anthropic-version %q; want the POST, its body and its other headers",
			got.method, got.body, got.header.Get("anthropic-version"))
	}
	if first := aSeen.all()[1]; len(keyHeaders(first.header)) != 4 {
		t.Errorf("the configured server got the key in %v, want all 4 headers", keyHeaders(first.header))
	}
}

// A redirect on the same origin (scheme, host, port) keeps the key; the client is
// http.DefaultClient's copy, left unchanged.
func TestRedirectSameOriginKeepsKey(t *testing.T) {
	a, aSeen := redirector(t, false, http.StatusPermanentRedirect, func(r *http.Request) string {
		if r.URL.Path == "/v1/messages" {
			return "/api/v1/messages"
		}
		return ""
	})
	c := wire.GuardClient(nil, a.URL+"/v1", redirectKey)
	resp, err := do(t, c, keyed(a.URL+"/v1/messages"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resp %v err %v", resp, err)
	}
	reqs := aSeen.all()
	if len(reqs) != 2 || reqs[1].path != "/api/v1/messages" || reqs[1].body != `{"model":"m"}` {
		t.Fatalf("requests %+v", reqs)
	}
	if got := keyHeaders(reqs[1].header); len(got) != 4 {
		t.Errorf("the redirected request on the same origin carried the key in %v, want all 4 headers", got)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("GuardClient changed http.DefaultClient")
	}
}

// Once a chain has left the origin, the key stays off even when it comes back.
func TestRedirectBackToOriginStaysStripped(t *testing.T) {
	var aURL string
	b, _ := redirector(t, false, http.StatusTemporaryRedirect, func(r *http.Request) string { return aURL + "/back" })
	a, aSeen := redirector(t, false, http.StatusTemporaryRedirect, func(r *http.Request) string {
		if r.URL.Path == "/v1/messages" {
			return b.URL + "/away"
		}
		return ""
	})
	aURL = a.URL
	c := wire.GuardClient(&http.Client{}, a.URL, redirectKey)
	if _, err := do(t, c, keyed(a.URL+"/v1/messages")); err != nil {
		t.Fatal(err)
	}
	reqs := aSeen.all()
	if len(reqs) != 2 || reqs[1].path != "/back" {
		t.Fatalf("requests %+v", reqs)
	}
	if got := keyHeaders(reqs[1].header); len(got) != 0 {
		t.Errorf("the hop back to the origin after leaving it carried the key in %v", got)
	}
}

// https to http is refused, whoever the target: the http server is never asked.
func TestRedirectDowngradeRefused(t *testing.T) {
	b, bSeen := target(t, false)
	a, _ := redirector(t, true, http.StatusPermanentRedirect, func(r *http.Request) string { return b.URL + "/v1/messages" })
	c := wire.GuardClient(a.Client(), a.URL, redirectKey)
	_, err := do(t, c, keyed(a.URL+"/v1/messages"))
	var re *wire.RedirectError
	if !errors.As(err, &re) || !re.Downgrade || re.Status != http.StatusPermanentRedirect || re.To.String() != b.URL+"/v1/messages" {
		t.Fatalf("err = %v, want a downgrade RedirectError", err)
	}
	if n := len(bSeen.all()); n != 0 {
		t.Errorf("the http server got %d requests", n)
	}
	info := wire.Info{Name: "Anthropic", BaseURL: a.URL}
	text := info.Redirected(re, a.URL+"/v1/messages")
	for _, w := range []string{"redirected the request to " + b.URL + "/v1/messages (HTTP 308)", "unencrypted http", "Check model.baseUrl"} {
		if !strings.Contains(text, w) {
			t.Errorf("text %q does not say %q", text, w)
		}
	}
}

// 301, 302 and 303 would re-send the POST as a GET without its body: refused, and the
// text suggests the base URL the redirect points at.
func TestRedirectThatDropsTheBodyRefused(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		b, bSeen := target(t, false)
		a, _ := redirector(t, false, status, func(r *http.Request) string { return b.URL + "/proxy/v1/chat/completions" })
		c := wire.GuardClient(&http.Client{}, a.URL+"/v1", redirectKey)
		_, err := do(t, c, keyed(a.URL+"/v1/chat/completions"))
		var re *wire.RedirectError
		if !errors.As(err, &re) || re.Downgrade || re.Status != status {
			t.Fatalf("HTTP %d: err = %v, want a RedirectError", status, err)
		}
		if n := len(bSeen.all()); n != 0 {
			t.Errorf("HTTP %d: the target got %d requests", status, n)
		}
		info := wire.Info{Name: "OpenAI", BaseURL: a.URL + "/v1"}
		text := info.Redirected(re, a.URL+"/v1/chat/completions")
		if !strings.Contains(text, "as a GET without its body") || !strings.Contains(text, "set model.baseUrl to "+b.URL+"/proxy/v1.") {
			t.Errorf("HTTP %d: text %q", status, text)
		}
	}
}

// The client's own CheckRedirect still applies, after the guard.
func TestRedirectKeepsTheClientsPolicy(t *testing.T) {
	b, bSeen := target(t, false)
	a, _ := redirector(t, false, http.StatusTemporaryRedirect, func(r *http.Request) string { return b.URL })
	var asked []string
	mine := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		asked = append(asked, req.Header.Get("x-api-key"))
		return http.ErrUseLastResponse
	}}
	c := wire.GuardClient(mine, a.URL, redirectKey)
	resp, err := do(t, c, keyed(a.URL))
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("resp %v err %v, want the 307 itself (the client's policy)", resp, err)
	}
	if len(asked) != 1 || asked[0] != "" || len(bSeen.all()) != 0 {
		t.Errorf("the client's policy saw x-api-key %q; target got %d requests", asked, len(bSeen.all()))
	}
	if mine.CheckRedirect == nil || c == mine {
		t.Error("GuardClient changed the client it was given")
	}
}

// The tenth redirect is refused, as net/http refuses it: ten requests in all.
func TestRedirectLimit(t *testing.T) {
	a, aSeen := redirector(t, false, http.StatusTemporaryRedirect, func(r *http.Request) string { return "/again" })
	c := wire.GuardClient(&http.Client{}, a.URL, redirectKey)
	_, err := do(t, c, keyed(a.URL))
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("err = %v", err)
	}
	if n := len(aSeen.all()); n != 10 {
		t.Errorf("%d requests, want 10", n)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://api.openai.com/v1", "https://API.openai.com:443/other", true},
		{"http://localhost:11434/v1", "http://localhost:11434", true},
		{"http://localhost/v1", "http://localhost:80/x", true},
		{"http://localhost:11434", "http://localhost:11435", false},
		{"http://api.example.com", "https://api.example.com", false},
		{"https://api.example.com", "https://evil.example.com", false},
		{"https://api.example.com", "https://api.example.com.evil.test", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := wire.SameOrigin(a, b); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
	if wire.SameOrigin(nil, &url.URL{}) {
		t.Error("SameOrigin(nil, …) = true")
	}
}
