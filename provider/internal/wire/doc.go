// Package wire is what pid's model providers share: the model and base URL checks of New
// (API.Check), a server-sent-events reader, sending with retries and backoff that honour
// Retry-After, the timeouts on a silent server (Timeouts), the redirect policy that keeps
// the key on the base URL's origin (GuardClient), error text a person can act on, key
// redaction, the history rules every API needs, and the builder that streams a message to
// the loop block by block.
//
// The entry point is Run (one streaming call, from request to returned llm.Message), which
// a provider calls with its request builder (PostJSON) and its Decoder of the API's events.
package wire
