// This file keeps the API key on the configured server when the server redirects: the
// client a provider uses follows only redirects that keep the request as it was, and sends
// the key only to the origin (scheme, host and port) of the base URL.

package wire

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects one request follows, as net/http's default policy.
const maxRedirects = 10

// credentialHeaders are the request headers that carry a key: OpenAI's bearer token,
// Anthropic's and Azure's key headers, and cookies. GuardClient drops them, and any other
// header whose value holds the key, on a redirect that leaves the base URL's origin.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie"}

// RedirectError is a redirect GuardClient refused to follow. The client returns it
// wrapped in a *url.Error; Run turns it into text with Info.Redirected.
type RedirectError struct {
	// From is the URL that answered with the redirect, To the URL it pointed at.
	From, To *url.URL
	// Status is the redirect's HTTP status.
	Status int
	// Downgrade is true for a redirect from https to http, false for a redirect that
	// would turn the POST into a GET without its body (301, 302, 303).
	Downgrade bool
}

// Error implements error. It names both URLs (without user info passwords).
func (e *RedirectError) Error() string {
	why := "it would turn the POST into a GET without its body"
	if e.Downgrade {
		why = "it leaves https for plain http"
	}
	return fmt.Sprintf("refused the redirect (HTTP %d) from %s to %s: %s", e.Status, e.From.Redacted(), e.To.Redacted(), why)
}

// GuardClient returns a copy of c (a new client when c is nil) whose redirect policy keeps
// key on baseURL's origin. Providers call it once, in New, with the key they send; the
// returned client is safe for concurrent use as c is. The policy, for each redirect:
//
//   - refuses (with a *RedirectError) one from https to http, whoever the target is;
//   - refuses one that would re-send the POST as a GET without its body (301, 302 and 303
//     after a POST): the server would answer a different request, with an error that
//     hides the redirect; 307 and 308 keep the method and body and are followed;
//   - once any hop of the chain has left the origin of baseURL (scheme, host and port,
//     default ports filled in), drops credentialHeaders and every header whose value
//     holds key, for that hop and every later one. Go's own rule drops Authorization for
//     another domain only, keeps it for another port, and never drops x-api-key;
//   - then applies c's own CheckRedirect when it has one, else net/http's limit of 10.
//
// A baseURL that does not parse makes every hop count as another origin.
func GuardClient(c *http.Client, baseURL, key string) *http.Client {
	var g http.Client
	if c != nil {
		g = *c
	}
	origin, _ := url.Parse(baseURL)
	next := g.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		prev := via[len(via)-1]
		status := 0
		if req.Response != nil {
			status = req.Response.StatusCode
		}
		if strings.EqualFold(prev.URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
			return &RedirectError{From: prev.URL, To: req.URL, Status: status, Downgrade: true}
		}
		if m := via[0].Method; m != http.MethodGet && m != http.MethodHead && req.Method != m {
			return &RedirectError{From: prev.URL, To: req.URL, Status: status}
		}
		left := !SameOrigin(origin, req.URL)
		for _, v := range via[1:] {
			left = left || !SameOrigin(origin, v.URL)
		}
		if left {
			stripCredentials(req.Header, key)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &g
}

// stripCredentials deletes from h the credential headers and every header with a value
// that holds key (when key is not empty).
func stripCredentials(h http.Header, key string) {
	for _, name := range credentialHeaders {
		h.Del(name)
	}
	if key == "" {
		return
	}
	for name, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, key) {
				delete(h, name)
				break
			}
		}
	}
}

// SameOrigin reports whether a and b have the same scheme, host and port (case aside, with
// the scheme's default port when none is given). A nil URL has no origin in common with
// anything.
func SameOrigin(a, b *url.URL) bool {
	if a == nil || b == nil {
		return false
	}
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// asRedirect returns the *RedirectError in err's chain, or nil.
func asRedirect(err error) *RedirectError {
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// suggestBase returns the base URL that would reach to directly, when to ends with the part
// endpoint adds to base (e.g. "/chat/completions"); "" otherwise.
func suggestBase(base, endpoint string, to *url.URL) string {
	suffix, ok := strings.CutPrefix(endpoint, base)
	if !ok || suffix == "" {
		return ""
	}
	u := *to
	u.RawQuery, u.Fragment, u.User = "", "", nil
	s, ok := strings.CutSuffix(u.String(), suffix)
	if !ok {
		return ""
	}
	if u.Host == "" {
		return ""
	}
	return s
}
