// Command cachebench measures how much of each model request pid sends the provider's prompt
// cache can serve (issue 32): a scripted session of 40 requests (tool calls, a plan ->
// acceptEdits switch, a denial, a subagent, a tool_search activation, a restart of pid with
// session/load, a compaction) runs against a local recording server, once per provider
// configuration, and for each request it prints its share: the length of the prefix it has
// in common with the previous request of its conversation (up to that request's last cache
// breakpoint on Anthropic), over that breakpoint's offset, the request laid out in cache order
// (tools, system prompt, then each message). Then the mean of the shares.
//
//	go run ./cmd/cachebench [-pid bin/pid] [-v]
//
// `make bench-cache` runs it. No key and no network: the server is on loopback.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pid-agent/pid/internal/pidtest"
)

func main() {
	bin := flag.String("pid", "bin/pid", "the pid binary to measure")
	verbose := flag.Bool("v", false, "print every request's share (else the ones below 1.00 and the means)")
	only := flag.String("variant", "", "run only the variants whose name holds this text")
	flag.Parse()
	if err := run(os.Stdout, *bin, *verbose, *only); err != nil {
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, bin string, verbose bool, only string) error {
	tmp, err := os.MkdirTemp("", "cachebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mcpBin, err := pidtest.Build(tmp, "github.com/pid-agent/pid/mcp/internal/testserver/cmd/pidtestmcp", false)
	if err != nil {
		return err
	}
	for i, v := range variants {
		if !strings.Contains(v.name, only) {
			continue
		}
		out, err := runScript(bin, mcpBin, filepath.Join(tmp, fmt.Sprint(i)), v)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		report(w, v, measure(out.requests), verbose)
	}
	return nil
}

// measured is one request's share.
type measured struct {
	n          int // 1-based
	conv, note string
	// prefix and breakpoint are the shared bytes and the previous request's last
	// breakpoint, hit what the cache can serve of them (see share); first is set when the
	// request has no earlier one in its conversation.
	prefix, breakpoint, hit int
	first                   bool
}

// share is the prefix share; hitShare the share the cache can serve.
func (m measured) share() float64    { return ratio(m.prefix, m.breakpoint) }
func (m measured) hitShare() float64 { return ratio(m.hit, m.breakpoint) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// measure returns each request's share against the previous request of its conversation.
func measure(reqs []request) []measured {
	last := map[string]layout{}
	var out []measured
	for i, r := range reqs {
		st := steps[i]
		l := cacheLayout(r.path, r.body)
		m := measured{n: i + 1, conv: st.conv, note: st.note}
		if prev, ok := last[st.conv]; ok {
			m.prefix, m.breakpoint, m.hit = share(prev, l)
		} else {
			m.first = true
		}
		last[st.conv] = l
		out = append(out, m)
	}
	return out
}

// mean returns the mean prefix and hit shares of the requests that have an earlier one in
// their conversation, and how many there are.
func mean(ms []measured) (prefix, hit float64, n int) {
	for _, m := range ms {
		if !m.first {
			prefix += m.share()
			hit += m.hitShare()
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return prefix / float64(n), hit / float64(n), n
}

// report prints the shares: each request's with -v, else the ones with a note or below 1.
// "share" is the prefix share, "hit" what the cache serves of it (the same for OpenAI).
func report(w io.Writer, v variant, ms []measured, verbose bool) {
	fmt.Fprintf(w, "%s: %d requests\n", v.name, len(ms))
	fmt.Fprintf(w, "  %3s  %-7s  %21s  %5s  %5s  %s\n", "#", "conv", "prefix / breakpoint", "share", "hit", "")
	for _, m := range ms {
		if m.first {
			fmt.Fprintf(w, "  %3d  %-7s  %21s  %5s  %5s  %s\n", m.n, m.conv, "-", "-", "-", m.note)
			continue
		}
		if !verbose && m.hit == m.breakpoint && m.note == "" {
			continue
		}
		fmt.Fprintf(w, "  %3d  %-7s  %9d / %9d  %5.2f  %5.2f  %s\n", m.n, m.conv, m.prefix, m.breakpoint, m.share(), m.hitShare(), m.note)
	}
	prefix, hit, n := mean(ms)
	fmt.Fprintf(w, "  mean over the %d requests with an earlier one in their conversation: share %.3f, hit %.3f\n\n", n, prefix, hit)
}
