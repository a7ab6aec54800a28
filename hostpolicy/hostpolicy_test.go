// This file tests Decide's answers for each kind of party, and the resolver's name map on a
// real lookup.

package hostpolicy

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/pid-agent/pid/netproxy"
)

// party is a Party whose callbacks record what they were asked.
type party struct {
	remembered map[string]bool
	answer     string
	err        error
	asked      []netproxy.Question
	kept       []string
}

func (p *party) of(auto, canAsk bool) Party {
	out := Party{Remembered: func(h string) bool { return p.remembered[h] }, Auto: auto,
		Remember: func(h string) { p.kept = append(p.kept, h) }}
	if canAsk {
		out.Ask = func(_ context.Context, q netproxy.Question) (string, error) {
			p.asked = append(p.asked, q)
			return p.answer, p.err
		}
	}
	return out
}

func TestDecide(t *testing.T) {
	q := netproxy.Question{Caller: netproxy.Caller{ID: "call1", Command: "curl x"}, Host: "example.com", Port: 443}
	for _, c := range []struct {
		name         string
		remembered   bool
		auto, canAsk bool
		answer       string
		err          error
		want         netproxy.Answer
		wantErr      bool
		asked        bool
		kept         bool
	}{
		{name: "remembered, even in auto mode", remembered: true, auto: true, want: netproxy.Answer{Decision: netproxy.AllowAlways}},
		{name: "auto mode refuses without asking", auto: true, canAsk: true, want: netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonAuto}},
		{name: "an editor that cannot ask", want: netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonCannotAsk}},
		{name: "allow", canAsk: true, answer: "allow", want: netproxy.Answer{Decision: netproxy.Allow}, asked: true},
		{name: "allowAlways is remembered", canAsk: true, answer: "allowAlways", want: netproxy.Answer{Decision: netproxy.AllowAlways}, asked: true, kept: true},
		{name: "deny", canAsk: true, answer: "deny", want: netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonRefused}, asked: true},
		{name: "an unknown answer denies", canAsk: true, answer: "yes please", want: netproxy.Answer{Decision: netproxy.Deny, Reason: ReasonRefused}, asked: true},
		{name: "an error refuses", canAsk: true, err: errors.New("gone"), wantErr: true, asked: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &party{remembered: map[string]bool{"example.com": c.remembered}, answer: c.answer, err: c.err}
			got, err := Decide(context.Background(), q, p.of(c.auto, c.canAsk))
			if (err != nil) != c.wantErr || got != c.want {
				t.Fatalf("Decide = %+v, %v; want %+v (error %v)", got, err, c.want, c.wantErr)
			}
			if asked := len(p.asked) == 1 && p.asked[0] == q; asked != c.asked {
				t.Errorf("asked %+v, want asked: %v", p.asked, c.asked)
			}
			if kept := slices.Equal(p.kept, []string{"example.com"}); kept != c.kept {
				t.Errorf("remembered %v, want remembered: %v", p.kept, c.kept)
			}
		})
	}
}

// The map's names resolve to their address whatever their case or final dot; a malformed
// map is none; a name the map does not list goes to the system (localhost resolves).
func TestParseResolve(t *testing.T) {
	r := ParseResolve("Registry.Example=127.0.0.9, other=::1")
	if r == nil {
		t.Fatal("a well-formed map gave no resolver")
	}
	ctx := context.Background()
	got, err := r.LookupNetIP(ctx, "ip", "registry.example.")
	if err != nil || !slices.Equal(got, []netip.Addr{netip.MustParseAddr("127.0.0.9")}) {
		t.Fatalf("registry.example. = %v, %v", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip", "OTHER"); err != nil || !slices.Equal(got, []netip.Addr{netip.MustParseAddr("::1")}) {
		t.Fatalf("OTHER = %v, %v", got, err)
	}
	if got, err := r.LookupNetIP(ctx, "ip4", "localhost"); err != nil || !slices.ContainsFunc(got, func(a netip.Addr) bool { return a.IsLoopback() }) {
		t.Fatalf("localhost through the system = %v, %v", got, err)
	}
	for _, bad := range []string{"", "name", "name=not-an-ip", "a=127.0.0.1,b"} {
		if ParseResolve(bad) != nil {
			t.Errorf("ParseResolve(%q) gave a resolver", bad)
		}
	}
}
