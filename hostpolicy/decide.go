// Package hostpolicy is how a session answers its network proxies about a host the
// allow-list does not know (issue 37): its entry point is Decide, which lets a host the
// workspace remembered through, refuses at once in auto mode or when the editor cannot ask
// (saying how the person can allow it), else asks the person and remembers an allowAlways
// answer. ParseResolve reads the name map a test may give the proxies' resolver. It knows
// no session, face nor store: they come in as a Party's callbacks.
//
// This file holds Decide.
package hostpolicy

import (
	"context"

	"github.com/pid-agent/pid/netproxy"
)

// Refusal reasons the model reads (after "not in the allowed hosts").
const (
	ReasonAuto = netproxy.ReasonNotAllowed + "; auto mode does not ask: the person can allow it by adding it to " +
		`"sandbox": {"allowedHosts": [...]} in their settings, or by leaving auto mode, so that they are asked`
	ReasonCannotAsk = netproxy.ReasonNotAllowed + "; this editor cannot ask (experimental.pid.networkApproval): the person can add it to " +
		`"sandbox": {"allowedHosts": [...]} in their settings`
	ReasonRefused = netproxy.ReasonNotAllowed + "; the person refused it"
)

// Party is the session a question is decided for.
type Party struct {
	// Remembered reports whether the workspace remembered host as allowed always (exact
	// names only). Contract: called from the proxy's goroutines, concurrently; it must not
	// block long (it may read the store).
	Remembered func(host string) bool
	// Auto reports whether the session is in auto mode now (then nobody is asked).
	Auto bool
	// Ask, nil when the editor cannot ask, puts the question to the person and returns
	// "allow", "allowAlways" or "deny" (anything else denies). Contract: called from the
	// proxy's goroutines, concurrently for different hosts; it returns once ctx ends; an
	// error refuses the host.
	Ask func(ctx context.Context, q netproxy.Question) (string, error)
	// Remember keeps an allowAlways answer about host for the workspace, and reports its own
	// failure. Contract: called after Ask, from the same goroutine; it must not block long.
	Remember func(host string)
}

// Decide answers question q for party p (netproxy.Asker's contract): a host the workspace
// remembered as allowed always is let through without asking; in auto mode, or when the
// editor cannot ask, the host is refused at once with a reason saying how the person can
// allow it; otherwise the person is asked, and an allowAlways answer is remembered.
func Decide(ctx context.Context, q netproxy.Question, p Party) (netproxy.Answer, error) {
	if p.Remembered(q.Host) {
		return netproxy.Answer{Decision: netproxy.AllowAlways}, nil
	}
	if p.Auto {
		return netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonAuto}, nil
	}
	if p.Ask == nil {
		return netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonCannotAsk}, nil
	}
	d, err := p.Ask(ctx, q)
	if err != nil {
		return netproxy.Answer{}, err
	}
	switch netproxy.Decision(d) {
	case netproxy.Allow:
		return netproxy.Answer{Decision: netproxy.Allow}, nil
	case netproxy.AllowAlways:
		p.Remember(q.Host)
		return netproxy.Answer{Decision: netproxy.AllowAlways}, nil
	}
	return netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonRefused}, nil
}
