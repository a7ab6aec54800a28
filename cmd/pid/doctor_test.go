package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/pid-agent/pid/sandbox"
	"github.com/pid-agent/pid/trust"
)

// pid doctor says what initialize's capabilities.experimental.pid.sandbox says, and its
// exit code tells whether bash can run sandboxed.
func TestDoctorReportsTheSandbox(t *testing.T) {
	out, err := exec.Command(pidBin, "doctor").CombinedOutput()
	c := sandbox.Probe()
	text := string(out)
	switch {
	case c.Available && err != nil:
		t.Fatalf("pid doctor failed with a sandbox available: %v\n%s", err, text)
	case !c.Available && err == nil:
		t.Fatalf("pid doctor succeeded without a sandbox:\n%s", text)
	}
	want := []string{fmt.Sprintf("user namespaces:   %s", map[bool]string{true: "yes", false: "no"}[c.UserNamespaces]),
		fmt.Sprintf("PID namespace:     %s", map[bool]string{true: "yes", false: "no"}[c.PidNamespaces])}
	if c.Available {
		want = append(want, "sandbox for bash:    available", fmt.Sprintf("Landlock:          yes, ABI %d", c.LandlockABI))
	} else {
		want = append(want, "NOT available", c.Reason)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("pid doctor lacks %q:\n%s", w, text)
		}
	}
}

// `pid sandbox-exec` started by hand (not by pid, so without a policy) refuses to run
// anything.
func TestSandboxExecNeedsPid(t *testing.T) {
	out, err := exec.Command(pidBin, "sandbox-exec", "--", "/bin/echo", "ran").CombinedOutput()
	if err == nil || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "no policy") {
		t.Errorf("sandbox-exec without pid: err=%v\n%s", err, out)
	}
}

// pid doctor --json gives a health check what it needs without any secret: the sandbox as
// Probe says, the user settings' model, its key variable and whether it is set (never the
// key), and whether the current folder is trusted.
func TestDoctorJSON(t *testing.T) {
	home := t.TempDir()
	config, state, ws := filepath.Join(home, "config"), filepath.Join(home, "state", "pid"), filepath.Join(home, "ws")
	for _, d := range []string{filepath.Join(config, "pid"), state, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(`{"model": {"provider": "anthropic", "id": "claude-x", "apiKeyEnv": "PID_DOCTOR_TEST_KEY"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "sk-doctor-test-secret-value"
	doctorIn := func(env ...string) gjson.Result {
		t.Helper()
		cmd := exec.Command(pidBin, "doctor", "--json")
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + config, "XDG_STATE_HOME=" + filepath.Join(home, "state")}, env...)...)
		out, _ := cmd.Output()
		if strings.Contains(string(out), secret) {
			t.Fatalf("pid doctor --json printed the key:\n%s", out)
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("not JSON: %q", out)
		}
		return gjson.ParseBytes(out)
	}
	r := doctorIn("PID_DOCTOR_TEST_KEY=" + secret)
	c := sandbox.Probe()
	if r.Get("sandbox.available").Bool() != c.Available || int(r.Get("sandbox.landlockAbi").Int()) != c.LandlockABI {
		t.Errorf("sandbox %s, Probe %+v", r.Get("sandbox").Raw, c)
	}
	if r.Get("model.provider").String() != "anthropic" || r.Get("model.id").String() != "claude-x" ||
		r.Get("model.keyVariable").String() != "PID_DOCTOR_TEST_KEY" || !r.Get("model.keySet").Bool() {
		t.Errorf("model %s", r.Get("model").Raw)
	}
	if r.Get("folder.trusted").Bool() || r.Get("folder.path").String() == "" {
		t.Errorf("folder %s", r.Get("folder").Raw)
	}
	st, err := trust.Open(filepath.Join(state, "trust.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Grant(ws); err != nil {
		t.Fatal(err)
	}
	r = doctorIn("PID_DOCTOR_TEST_KEY=")
	if r.Get("model.keySet").Bool() || r.Get("model.keyError").String() == "" || !r.Get("folder.trusted").Bool() {
		t.Errorf("without the key, in a trusted folder: %s", r.Raw)
	}
}

// pid doctor says what network the user settings give commands: the proxy, the allowed
// hosts (a preset's included), the denied ones, and the names of injected headers, never
// where their values come from.
func TestDoctorReportsTheProxy(t *testing.T) {
	c := sandbox.Probe()
	config := t.TempDir()
	settings := `{"sandbox": {"allowPresets": ["go"], "allowedHosts": ["docs.example.org"], "deniedHosts": ["evil.example"],
		"injectHeaders": {"api.example.com": {"Authorization": "env:PID_DOCTOR_SECRET_VAR"}}}}`
	if err := os.MkdirAll(filepath.Join(config, "pid"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "pid", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pidBin, "doctor")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	out, _ := cmd.CombinedOutput()
	text := string(out)
	want := []string{"network for bash:    allowlist, through pid's proxy",
		"allowed hosts:     docs.example.org, proxy.golang.org, sum.golang.org", "denied hosts:      evil.example",
		"headers added:     api.example.com: Authorization"}
	if c.Available && !c.NetworkNamespaces {
		want = []string{`network for bash:    off: "allowlist" needs a network namespace`}
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("pid doctor lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "PID_DOCTOR_SECRET_VAR") {
		t.Errorf("pid doctor names where a header's value comes from:\n%s", text)
	}
}
