// This file turns failed HTTP answers and broken streams into error text a person can act
// on: what went wrong, in the server's words, and what to check or set.

package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Info describes the endpoint a provider talks to, for error text.
type Info struct {
	// Name is how the text names the server: "OpenAI", "Anthropic", or "the
	// OpenAI-compatible server at http://localhost:11434/v1".
	Name    string
	Model   string
	BaseURL string
	// KeyEnv is the environment variable the key came from ("" when there is none to name).
	KeyEnv string
	// HasKey says whether a key was sent.
	HasKey bool
	// BaseURLHint is added to "unknown model" text, e.g. a reminder that
	// OpenAI-compatible base URLs usually end in /v1.
	BaseURLHint string
}

// Failure is a failed HTTP answer after the retries: its status, the server's error text
// (taken from the body), the number of attempts made, the wait the server last asked for
// (0 when it asked for none), and the URL that answered when a redirect led to another
// origin than the one asked ("" otherwise).
type Failure struct {
	Status       int
	Body         []byte
	Attempts     int
	RetryAfter   time.Duration
	RedirectedTo string
}

// ServerError is the error a server put in a body: its type or code and message.
type ServerError struct {
	Type    string
	Message string
}

// ParseServerError reads the error shapes the APIs and local servers use:
// {"error":{"message","type","code"}} (OpenAI, llama.cpp, vLLM),
// {"type":"error","error":{"type","message"}} (Anthropic), {"error":"text"} (Ollama) and
// {"message":"text"}. It reports false when body is none of them.
func ParseServerError(body []byte) (ServerError, bool) {
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &raw) != nil {
		return ServerError{}, false
	}
	if len(raw.Error) > 0 && raw.Error[0] == '"' {
		var s string
		if json.Unmarshal(raw.Error, &s) == nil && s != "" {
			return ServerError{Message: s}, true
		}
	}
	if len(raw.Error) > 0 && raw.Error[0] == '{' {
		var e struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(raw.Error, &e) == nil && (e.Message != "" || e.Type != "") {
			se := ServerError{Type: e.Type, Message: e.Message}
			if code, ok := e.Code.(string); ok && code != "" {
				se.Type = code
			}
			return se, true
		}
	}
	if raw.Message != "" {
		return ServerError{Message: raw.Message}, true
	}
	return ServerError{}, false
}

// serverText is the server's own words about a failure: the parsed message, or the start
// of the body when it is not JSON.
func serverText(body []byte) (ServerError, string) {
	if se, ok := ParseServerError(body); ok {
		if se.Message == "" {
			return se, se.Type
		}
		return se, se.Message
	}
	return ServerError{}, Excerpt(string(body), 300)
}

// Excerpt returns s trimmed and cut to at most n bytes (at a rune boundary, marked "…").
func Excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Describe returns the error text for a failed HTTP answer.
func (in *Info) Describe(f Failure) string {
	se, said := serverText(f.Body)
	status := fmt.Sprintf("HTTP %d", f.Status)
	if said != "" {
		status += ": " + said
	}
	lower := strings.ToLower(said + " " + se.Type)
	switch {
	case f.RedirectedTo != "" && (f.Status == http.StatusUnauthorized || f.Status == http.StatusForbidden):
		return fmt.Sprintf("%s redirected the request to %s, another server, which pid sends no API key to; it answered %s. If that server is the API you mean, set model.baseUrl to it.", in.Subject(), f.RedirectedTo, status)
	case f.Status == http.StatusUnauthorized || (f.Status == http.StatusForbidden && !in.HasKey):
		if !in.HasKey {
			return fmt.Sprintf("%s requires an API key (%s). Set %s, or name the variable that holds the key in model.apiKeyEnv.", in.Subject(), status, in.keyEnvOr("the key's environment variable"))
		}
		return fmt.Sprintf("%s rejected the API key (%s). Check the key in %s.", in.Subject(), status, in.keyEnvOr("the configured environment variable"))
	case f.Status == http.StatusForbidden:
		return fmt.Sprintf("%s refused the request (%s). Check that the key in %s may use model %q.", in.Subject(), status, in.keyEnvOr("the configured environment variable"), in.Model)
	case isContextTooLong(f.Status, lower):
		return fmt.Sprintf("The conversation is too long for model %q (%s). Start a new session or shorten the history.", in.Model, status)
	case f.Status == http.StatusNotFound || (f.Status == http.StatusBadRequest && isUnknownModel(lower)):
		text := fmt.Sprintf("%s does not know model %q (%s). Check model.id", in.Subject(), in.Model, status)
		if in.BaseURLHint != "" {
			text += "; " + in.BaseURLHint
		}
		return text + "."
	case f.Status == http.StatusTooManyRequests && isQuota(lower):
		return fmt.Sprintf("%s says the account is out of quota (%s). Check the plan and billing of the key in %s.", in.Subject(), status, in.keyEnvOr("the configured environment variable"))
	case f.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("%s rate-limited the request (%s)%s. Wait a while and try again%s.", in.Subject(), status, attempts(f.Attempts), askedWait(f.RetryAfter))
	case f.Status == 529 || se.Type == "overloaded_error":
		return fmt.Sprintf("%s is overloaded (%s)%s. Try again in a while%s.", in.Subject(), status, attempts(f.Attempts), askedWait(f.RetryAfter))
	case f.Status >= 500:
		return fmt.Sprintf("%s had a server error (%s)%s. Try again in a while%s.", in.Subject(), status, attempts(f.Attempts), askedWait(f.RetryAfter))
	case f.Status == http.StatusBadRequest || f.Status == http.StatusUnprocessableEntity:
		return fmt.Sprintf("%s rejected the request for model %q (%s).", in.Subject(), in.Model, status)
	}
	return fmt.Sprintf("%s answered %s.", in.Subject(), status)
}

// StreamError is the text for an error the server reported inside the stream.
func (in *Info) StreamError(typ, message string) string {
	said := message
	if typ != "" && message != "" {
		said = typ + ": " + message
	} else if said == "" {
		said = typ
	}
	if said == "" {
		said = "no details given"
	}
	lower := strings.ToLower(said)
	switch {
	case strings.Contains(lower, "overloaded"):
		return fmt.Sprintf("%s is overloaded and stopped the answer (%s). Try again in a while.", in.Subject(), said)
	case strings.Contains(lower, "rate_limit") || strings.Contains(lower, "rate limit"):
		return fmt.Sprintf("%s rate-limited the answer mid-stream (%s). Wait a while and try again.", in.Subject(), said)
	case isContextTooLong(http.StatusBadRequest, lower):
		return fmt.Sprintf("The conversation is too long for model %q (%s). Start a new session or shorten the history.", in.Model, said)
	}
	return fmt.Sprintf("%s reported an error mid-stream (%s). Try again.", in.Subject(), said)
}

// Unwritable is the text for a request whose body could not be written.
func (in *Info) Unwritable(err error) string {
	return fmt.Sprintf("Could not write the request for model %q: %v", in.Model, err)
}

// Unreachable is the text for a request that got no HTTP answer.
func (in *Info) Unreachable(err error) string {
	where := in.Name
	if !strings.Contains(in.Name, in.BaseURL) {
		where += " at " + in.BaseURL
	}
	return fmt.Sprintf("Could not reach %s (%v). Check that the server is running and that model.baseUrl is right.", where, err)
}

// TimedOut is the text for a request cut off because its server went silent (see
// TimeoutError); streamed says whether part of the answer had reached the sink.
func (in *Info) TimedOut(e *TimeoutError, streamed bool) string {
	after := Duration(e.After)
	switch {
	case e.Setting == RequestTimeoutSetting:
		return fmt.Sprintf("%s did not start answering within %s (%s)%s. Try again in a while; if the server is slow to start (a local server loading the model or reading a long prompt), raise %s.", in.Subject(), after, e.Setting, attempts(e.Attempts), e.Setting)
	case streamed:
		return fmt.Sprintf("%s sent nothing for %s in the middle of the answer (%s), so pid stopped waiting. The answer so far is kept, but its tool calls are not run and it is not sent back to the model. Ask again to retry; if the model pauses longer than that while it thinks, raise %s.", in.Subject(), after, e.Setting, e.Setting)
	}
	return fmt.Sprintf("%s started the answer but then sent nothing for %s (%s)%s. Try again in a while; if the model pauses longer than that while it thinks, raise %s.", in.Subject(), after, e.Setting, attempts(e.Attempts), e.Setting)
}

// Redirected is the text for a redirect GuardClient refused; endpoint is the URL the
// request was posted to, from which the base URL to suggest is worked out.
func (in *Info) Redirected(e *RedirectError, endpoint string) string {
	text := fmt.Sprintf("%s redirected the request to %s (HTTP %d)", in.Subject(), e.To.Redacted(), e.Status)
	if e.Downgrade {
		text += ", which leaves https for unencrypted http; pid does not follow that, since the request and its API key would travel in clear text."
	} else {
		text += ", which would send it again as a GET without its body; pid does not follow that, since the server would answer another request."
	}
	if base := suggestBase(in.BaseURL, endpoint, e.To); base != "" && !e.Downgrade {
		return text + fmt.Sprintf(" If that is the server's address, set model.baseUrl to %s.", base)
	}
	return text + " Check model.baseUrl."
}

// Dropped is the text for a stream that ended before its last event.
func (in *Info) Dropped(err error) string {
	if err == nil {
		return fmt.Sprintf("The connection to %s closed before the answer was complete. Try again.", in.Name)
	}
	return fmt.Sprintf("The connection to %s dropped before the answer was complete (%v). Try again.", in.Name, err)
}

// Malformed is the text for a stream event that could not be read.
func (in *Info) Malformed(what string, data string) string {
	if data != "" {
		what += fmt.Sprintf(": %q", Excerpt(data, 200))
	}
	return fmt.Sprintf("%s sent a malformed stream (%s). Check that model.baseUrl points at a compatible API.", in.Subject(), what)
}

// Subject is Name for the start of a sentence.
func (in *Info) Subject() string {
	if in.Name != "" && in.Name[0] >= 'a' && in.Name[0] <= 'z' {
		return string(in.Name[0]-'a'+'A') + in.Name[1:]
	}
	return in.Name
}

func (in *Info) keyEnvOr(fallback string) string {
	if in.KeyEnv != "" {
		return in.KeyEnv
	}
	return fallback
}

func attempts(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" and still failed after %d attempts", n)
}

func askedWait(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (the server asked to wait %s)", d.Round(time.Second))
}

func isContextTooLong(status int, lower string) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	if status != http.StatusBadRequest {
		return false
	}
	for _, s := range []string{"context_length_exceeded", "maximum context length", "context length", "prompt is too long", "too many tokens", "context window"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

func isUnknownModel(lower string) bool {
	return strings.Contains(lower, "model_not_found") ||
		(strings.Contains(lower, "model") && (strings.Contains(lower, "not found") || strings.Contains(lower, "does not exist")))
}

func isQuota(lower string) bool {
	return strings.Contains(lower, "insufficient_quota") || strings.Contains(lower, "exceeded your current quota")
}
