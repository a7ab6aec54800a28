// This file holds the refusals: what the proxy records when it refuses a connection, the
// error it returns, and the line a bash result shows for each.

package netproxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The reasons a refusal gives, besides the address kinds of addr.go ("a loopback address")
// and an Asker's own.
const (
	ReasonNotAllowed = "not in the allowed hosts"
	ReasonDenied     = "in the denied hosts"
	ReasonLocalhost  = "localhost"
	ReasonOff        = "the network is off (sandbox.network false)"
	reasonNoAnswer   = ReasonNotAllowed + "; no answer within 60 s"
)

// Refusal is one refused destination: the host as the client named it, the port, why, and
// how many connections to it were refused for the same reason.
type Refusal struct {
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// String returns "example.com:443 (not in the allowed hosts)".
func (r Refusal) String() string {
	return net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) + " (" + r.Reason + ")"
}

// RefusedError is the error of a connection the proxy refused (Proxy.Dial's).
type RefusedError struct{ Refusal Refusal }

func (e *RefusedError) Error() string { return "pid's proxy refused: " + e.Refusal.String() }

// maxShown caps the refusals Summary lists one by one.
const maxShown = 20

// Summary returns one line per refusal, "[pid's proxy refused: example.com:443 (not in the
// allowed hosts)]", at most 20 and then how many more; "" when there are none. Pure.
func Summary(rs []Refusal) string {
	var b strings.Builder
	for i, r := range rs {
		if i == maxShown {
			fmt.Fprintf(&b, "[pid's proxy refused %d more destinations]\n", len(rs)-maxShown)
			break
		}
		b.WriteString("[pid's proxy refused: ")
		b.WriteString(r.String())
		if r.Count > 1 {
			fmt.Fprintf(&b, " ×%d", r.Count)
		}
		b.WriteString("]\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// maxRefusals caps the distinct refusals a Client keeps (a loop refusing the same host is
// one entry with a count); later distinct ones are not recorded.
const maxRefusals = 100

// addRefusal records r in list, counting repeats.
func addRefusal(list []Refusal, r Refusal) []Refusal {
	for i := range list {
		if list[i].Host == r.Host && list[i].Port == r.Port && list[i].Reason == r.Reason {
			list[i].Count++
			return list
		}
	}
	if len(list) >= maxRefusals {
		return list
	}
	r.Count = 1
	return append(list, r)
}
