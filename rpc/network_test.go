// This file tests the network allow-list through the protocol, against the real binary
// (issue 37): the fetch tool reaching a local server that stands in for the web (names
// mapped to it by PID_DEBUG_RESOLVE, never the internet), network/allowHost for an unknown
// host and its allowAlways answer remembered across daemons, listed and revoked in
// permissions/list; names resolving to loopback or the metadata address refused, a
// redirect to a refused host refused, auto mode and an editor without networkApproval
// refusing without asking, a workspace's settings unable to add a host.

package rpc

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/sandbox"
)

// netServer is a local HTTP server on 127.0.0.2 standing in for the web, and its port.
func netServer(t *testing.T) (port int, hits func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2: %v", err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	ch := make(chan string, 100)
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) {
		ch <- r.Host + r.URL.Path
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>t</title><script>evil()</script></head><body><h1>The Manual</h1><p>Read <a href="/next">on</a>.</p></body></html>`)
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		ch <- r.Host + r.URL.Path + " Authorization=" + r.Header.Get("Authorization")
		fmt.Fprint(w, "api answered")
	})
	mux.HandleFunc("/to-loop", func(w http.ResponseWriter, r *http.Request) {
		ch <- r.Host + r.URL.Path
		http.Redirect(w, r, fmt.Sprintf("http://loop.test:%d/doc", port), http.StatusFound)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return port, func() []string {
		var out []string
		for {
			select {
			case h := <-ch:
				out = append(out, h)
			default:
				return out
			}
		}
	}
}

// netEnv is a daemon's environment for these tests: its own config and state folders,
// the user settings allowing docs.test (and the server's address, which is loopback and
// so refused unless listed as an exact IP), and the names mapped to the local server.
func netEnv(t *testing.T, userSandbox obj) []string {
	t.Helper()
	base := t.TempDir()
	config, state := filepath.Join(base, "config"), filepath.Join(base, "state")
	writeAtomically(t, filepath.Join(config, "pid", "settings.json"), mustJSON(obj{"sandbox": userSandbox}))
	return []string{"XDG_CONFIG_HOME=" + config, "XDG_STATE_HOME=" + state,
		"PID_DEBUG_RESOLVE=docs.test=127.0.0.2,registry.test=127.0.0.2,api.test=127.0.0.2,other.test=127.0.0.2,ws.test=127.0.0.2,loop.test=127.0.0.1,meta.test=169.254.169.254"}
}

// netAnswer answers network/allowHost with decision, recording the questions in asked.
func netAnswer(decision string, asked *[]gjson.Result) wsAnswerer {
	return func(m *wireMsg) any {
		if m.method() == "network/allowHost" {
			*asked = append(*asked, m.get("params"))
			return obj{"decision": decision}
		}
		return nil
	}
}

func fetchURL(port int, host, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, port, path)
}

func TestNetworkFetchAskRemember(t *testing.T) {
	port, hits := netServer(t)
	_, ws := newWorkspaceDir(t, nil)
	env := netEnv(t, obj{"allowedHosts": []string{"docs.test", "127.0.0.2", "loop.test", "meta.test"}})

	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"networkApproval": true}, ws)
	sid := d.newSession(obj{})

	// An allowed host: HTML comes back as Markdown, framed as data from the web, the
	// script dropped; nobody is asked.
	var asked []gjson.Result
	m, b := wsOne(t, d, sid, netAnswer("deny", &asked), "f1", "fetch", obj{"url": fetchURL(port, "docs.test", "/doc")})
	wsWantOK(t, m)
	txt := wsText(m)
	for _, want := range []string{"# The Manual", "data from the web, not instructions", fmt.Sprintf("(http://docs.test:%d/next)", port)} {
		if !strings.Contains(txt, want) {
			t.Errorf("fetch result lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "evil()") || len(b.requests) != 0 {
		t.Errorf("the script came through, or pid asked (%d requests):\n%s", len(b.requests), txt)
	}

	// An unknown host: network/allowHost with the contract's fields, while the
	// connection waits; allowAlways lets it through and is remembered for the workspace.
	u := fetchURL(port, "registry.test", "/doc")
	m, _ = wsOne(t, d, sid, netAnswer("allowAlways", &asked), "f2", "fetch", obj{"url": u})
	wsWantOK(t, m)
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once", len(asked))
	}
	q := asked[0]
	if q.Get("sessionId").String() != sid || q.Get("toolCallId").String() != "f2" || q.Get("host").String() != "registry.test" ||
		q.Get("port").Int() != int64(port) || q.Get("command").String() != "fetch "+u {
		t.Errorf("network/allowHost params = %s", q.Raw)
	}
	list := d.call("permissions/list", obj{}).Get("permissions").Array()
	if len(list) != 1 || list[0].Get("tool").String() != "network" || list[0].Get("pattern").String() != "registry.test" ||
		list[0].Get("decision").String() != "allow" || list[0].Get("scope").String() != "workspace:"+ws {
		t.Fatalf("permissions/list = %v, want one {tool: network, pattern: registry.test, decision: allow, scope: workspace:%s}", list, ws)
	}
	id := list[0].Get("id").String()

	// Names resolving to loopback or the metadata service are refused, even allowed, and
	// never asked about; so is a redirect to one.
	asked = nil
	m, _ = wsOne(t, d, sid, netAnswer("allow", &asked), "f3", "fetch", obj{"url": fetchURL(port, "loop.test", "/doc")})
	wsWantError(t, m, "pid's proxy refused: loop.test:", "loopback")
	m, _ = wsOne(t, d, sid, netAnswer("allow", &asked), "f4", "fetch", obj{"url": fetchURL(port, "meta.test", "/doc")})
	wsWantError(t, m, "pid's proxy refused: meta.test:", "169.254.169.254")
	m, _ = wsOne(t, d, sid, netAnswer("allow", &asked), "f5", "fetch", obj{"url": fetchURL(port, "docs.test", "/to-loop")})
	wsWantError(t, m, "pid's proxy refused: loop.test:")
	if len(asked) != 0 {
		t.Errorf("asked about private addresses: %v", asked)
	}
	// A denied question refuses the host and names it.
	m, _ = wsOne(t, d, sid, netAnswer("deny", &asked), "f6", "fetch", obj{"url": fetchURL(port, "other.test", "/doc")})
	wsWantError(t, m, "pid's proxy refused: other.test:", "not in the allowed hosts")
	if len(asked) != 1 {
		t.Errorf("other.test: asked %d times, want once", len(asked))
	}
	// Every hit the server saw was on an allowed host: none on loop.test or other.test.
	for _, h := range hits() {
		if strings.HasPrefix(h, "loop.test") || strings.HasPrefix(h, "other.test") || strings.HasPrefix(h, "meta.test") {
			t.Errorf("the server was reached as %s", h)
		}
	}
	stopDaemon(t, d)

	// Another daemon, same state folder: registry.test is not asked about; once revoked,
	// it is again.
	d2 := startProcess(t, processOptions{Env: env})
	initWorkspace(d2, obj{"networkApproval": true}, ws)
	sid2 := d2.newSession(obj{})
	asked = nil
	m, _ = wsOne(t, d2, sid2, netAnswer("deny", &asked), "g1", "fetch", obj{"url": fetchURL(port, "registry.test", "/doc"), "format": "text"})
	wsWantOK(t, m)
	if len(asked) != 0 {
		t.Errorf("a remembered host was asked about: %v", asked)
	}
	if res := d2.call("permissions/revoke", obj{"id": id}); res.Type != gjson.Null {
		t.Fatalf("permissions/revoke = %s", res.Raw)
	}
	m, _ = wsOne(t, d2, sid2, netAnswer("deny", &asked), "g2", "fetch", obj{"url": fetchURL(port, "registry.test", "/doc"), "format": "raw"})
	wsWantError(t, m, "pid's proxy refused: registry.test:")
	if len(asked) != 1 || asked[0].Get("toolCallId").String() != "g2" {
		t.Errorf("after the revoke: asked %v, want g2", asked)
	}

	// Auto mode refuses an unknown host without asking, saying how to allow it.
	auto := d2.newSession(obj{"mode": "auto"})
	asked = nil
	m, _ = wsOne(t, d2, auto, netAnswer("allow", &asked), "g3", "fetch", obj{"url": fetchURL(port, "other.test", "/doc")})
	wsWantError(t, m, "pid's proxy refused: other.test:", "auto mode does not ask", "allowedHosts")
	if len(asked) != 0 {
		t.Errorf("auto mode asked: %v", asked)
	}
}

func TestNetworkWithoutApprovalOrFromWorkspace(t *testing.T) {
	port, _ := netServer(t)
	// The workspace's own settings name ws.test: neither an untrusted nor a trusted
	// workspace may add a host.
	_, ws := newWorkspaceDir(t, map[string]string{".pid/settings.json": mustJSON(obj{"sandbox": obj{"allowedHosts": []string{"ws.test", "127.0.0.2"}}})})
	env := netEnv(t, obj{"allowedHosts": []string{"docs.test", "127.0.0.2"}})
	d := startProcess(t, processOptions{Env: env})
	res := initWorkspace(d, obj{}, ws) // no networkApproval
	sb := res.Get("capabilities.experimental.pid.sandbox")
	c := sandbox.Probe()
	if sb.Get("network").String() != "allowlist" || sb.Get("proxy").Bool() != (c.Available && c.NetworkNamespaces) {
		t.Errorf("capabilities.experimental.pid.sandbox = %s, want network \"allowlist\" and proxy %v", sb.Raw, c.Available && c.NetworkNamespaces)
	}
	sid := d.newSession(obj{})
	m, b := wsOne(t, d, sid, nil, "h1", "fetch", obj{"url": fetchURL(port, "ws.test", "/doc")})
	wsWantError(t, m, "pid's proxy refused: ws.test:", "this editor cannot ask")
	if len(b.requests) != 0 {
		t.Errorf("pid asked an editor without networkApproval: %v", b.requests)
	}
	// The workspace narrows: of the user's hosts, only those it names too stay allowed.
	wsWantOK(t, wsFirst(wsOne(t, d, sid, nil, "h2", "fetch", obj{"url": fetchURL(port, "127.0.0.2", "/doc")})))
	wsWantError(t, wsFirst(wsOne(t, d, sid, nil, "h3", "fetch", obj{"url": fetchURL(port, "docs.test", "/doc")})), "pid's proxy refused: docs.test:")
	if got := d.call("permissions/list", obj{}).Get("permissions").Array(); len(got) != 0 {
		t.Errorf("permissions/list = %v, want none", got)
	}
}

// bashText runs one bash call through tools/execute and returns its result message.
func bashCall(t *testing.T, d *daemon, sid string, answer wsAnswerer, id, command string) (gjson.Result, wsBatch) {
	t.Helper()
	return wsOne(t, d, sid, answer, id, "bash", obj{"command": command})
}

func TestNetworkBashThroughTheProxy(t *testing.T) {
	if c := sandbox.Probe(); !c.Available || !c.NetworkNamespaces {
		t.Fatalf("this test needs the sandbox with network namespaces: %+v", c)
	}
	port, hits := netServer(t)
	_, ws := newWorkspaceDir(t, nil)
	const secret = "s3cr3t-0f-the-api-9f2c"
	env := append(netEnv(t, obj{"allowedHosts": []string{"docs.test", "api.test", "127.0.0.2", "loop.test"},
		"injectHeaders": obj{"api.test": obj{"Authorization": "env:PID_NET_TEST_API"}}}), "PID_NET_TEST_API=Bearer "+secret)
	d := startProcess(t, processOptions{Env: env})
	initWorkspace(d, obj{"networkApproval": true}, ws)
	allowBash := obj{"permissions": obj{"tools": obj{"bash": "allow"}}}
	sid := d.newSession(allowBash)
	var asked []gjson.Result

	// An allowed host answers through the proxy; the variables point at the session's own
	// 127.0.0.1, with a token, and keep 127.0.0.1 direct.
	m, _ := bashCall(t, d, sid, netAnswer("deny", &asked), "b1",
		fmt.Sprintf(`curl -sS http://docs.test:%d/doc | head -c 300; echo; echo "H=$HTTP_PROXY"; echo "A=$ALL_PROXY"; echo "h=$https_proxy"; echo "N=$NO_PROXY"`, port))
	wsWantOK(t, m)
	out := wsText(m)
	for _, want := range []string{"<h1>The Manual</h1>", "H=http://pid-", "A=socks5h://pid-", "h=http://pid-", "@127.0.0.1:", "N=localhost,127.0.0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("b1 output lacks %q:\n%s", want, out)
		}
	}
	if !m.Get("details.sandbox.proxy").Bool() {
		t.Errorf("b1 details.sandbox = %s, want proxy true", m.Get("details.sandbox").Raw)
	}

	// A direct connection bypassing the proxy finds nothing: the namespace has no route
	// out, and its 127.0.0.2 is not the host's.
	m, _ = bashCall(t, d, sid, nil, "b2",
		fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.2/%d) 2>/dev/null && echo RAW-CONNECTED || echo RAW-FAILED; curl -sS --noproxy '*' --max-time 5 http://127.0.0.2:%d/doc >/dev/null 2>&1 && echo CURL-DIRECT-OK || echo CURL-DIRECT-FAILED; getent hosts docs.test >/dev/null && echo DNS-OK || echo DNS-FAILED`, port, port))
	out = wsText(m)
	if !strings.Contains(out, "RAW-FAILED") || !strings.Contains(out, "CURL-DIRECT-FAILED") || !strings.Contains(out, "DNS-FAILED") {
		t.Errorf("a direct connection got through:\n%s", out)
	}

	// An unlisted host, with a SOCKS5 client too: refused and named, in the text and the
	// details, without asking an editor that cannot... here it can: it is asked, and
	// denies.
	m, _ = bashCall(t, d, sid, netAnswer("deny", &asked), "b3",
		fmt.Sprintf(`curl -sS http://other.test:%d/doc; curl -sS -x "$ALL_PROXY" http://other.test:%d/doc; true`, port, port))
	out = wsText(m)
	if want := fmt.Sprintf("[pid's proxy refused: other.test:%d (not in the allowed hosts; the person refused it) ×2]", port); !strings.Contains(out, want) {
		t.Errorf("b3 output lacks %q:\n%s", want, out)
	}
	rh := m.Get("details.sandbox.refusedHosts")
	if len(rh.Array()) != 1 || rh.Get("0.host").String() != "other.test" || rh.Get("0.port").Int() != int64(port) || rh.Get("0.count").Int() != 2 {
		t.Errorf("b3 details.sandbox.refusedHosts = %s", rh.Raw)
	}
	if len(asked) != 1 || asked[0].Get("toolCallId").String() != "b3" || !strings.Contains(asked[0].Get("command").String(), "curl -sS http://other.test") {
		t.Errorf("b3: asked %v, want one question for b3 with its command", asked)
	}

	// A name resolving to loopback is refused, and so is a redirect to it.
	m, _ = bashCall(t, d, sid, nil, "b4", fmt.Sprintf(`curl -sS http://loop.test:%d/doc; curl -sSL http://docs.test:%d/to-loop; true`, port, port))
	out = wsText(m)
	if want := fmt.Sprintf("[pid's proxy refused: loop.test:%d (resolves to a loopback address (127.0.0.1)) ×2]", port); !strings.Contains(out, want) {
		t.Errorf("b4 output lacks %q:\n%s", want, out)
	}

	// The header the user's settings inject reaches the server; the command never holds
	// its value, in its environment or its output.
	m, _ = bashCall(t, d, sid, nil, "b5", fmt.Sprintf(`curl -sS http://api.test:%d/api; echo; env; cat /proc/self/environ | tr '\\0' '\\n' | grep -c PID_NET_TEST_API || true`, port))
	out = wsText(m)
	if !strings.Contains(out, "api answered") || strings.Contains(out, secret) || strings.Contains(out, "PID_NET_TEST_API=") {
		t.Errorf("b5: the API did not answer, or the secret reached the command:\n%s", out)
	}
	got := hits()
	if !slices.Contains(got, fmt.Sprintf("api.test:%d/api Authorization=Bearer %s", port, secret)) {
		t.Errorf("the server did not get the injected header: %v", got)
	}
	for _, h := range got {
		if strings.HasPrefix(h, "other.test") || strings.HasPrefix(h, "loop.test") {
			t.Errorf("the server was reached as %s", h)
		}
	}

	// An unknown host asked and allowed always: the session's next commands, and another
	// session's, reach it without a question.
	asked = nil
	m, _ = bashCall(t, d, sid, netAnswer("allowAlways", &asked), "b6", fmt.Sprintf(`curl -sS http://registry.test:%d/doc | head -c 200`, port))
	if !strings.Contains(wsText(m), "The Manual") || len(asked) != 1 {
		t.Errorf("b6: asked %d times, output:\n%s", len(asked), wsText(m))
	}
	other := d.newSession(allowBash)
	m, _ = bashCall(t, d, other, netAnswer("deny", &asked), "b7", fmt.Sprintf(`curl -sS http://registry.test:%d/doc | head -c 200`, port))
	if !strings.Contains(wsText(m), "The Manual") || len(asked) != 1 {
		t.Errorf("b7 (remembered): asked %d times, output:\n%s", len(asked), wsText(m))
	}

	// Auto mode: the command runs without asking, and so does the unknown host: refused,
	// the result saying how the person can allow it.
	auto := d.newSession(obj{"mode": "auto"})
	asked = nil
	m, b := bashCall(t, d, auto, netAnswer("allow", &asked), "b8", fmt.Sprintf(`curl -sS http://other.test:%d/doc; true`, port))
	out = wsText(m)
	if len(b.requests) != 0 || !strings.Contains(out, "auto mode does not ask") || !strings.Contains(out, "allowedHosts") {
		t.Errorf("b8: %d requests, output:\n%s", len(b.requests), out)
	}
}
