package redact_test

// Tests of the redaction rule: each built-in pattern family with secrets it must catch and
// look-alikes it must leave, extra patterns from settings, and the hook's R11 behaviour.

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pid-agent/pid/internal/secret"
	"github.com/pid-agent/pid/llm"
	"github.com/pid-agent/pid/redact"
	"github.com/pid-agent/pid/toolexec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Fake secrets, assembled so that this file itself does not look like it holds any.
var (
	ghp       = "ghp_" + strings.Repeat("A1b2", 9)
	ghPAT     = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
	openai    = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	openaiOld = "sk-" + "T3BlbkFJ" + "abcdEFGH1234ijklMNOP5678qrstUVWX90yz"
	anthropic = "sk-ant-" + "api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-AbCdEf"
	aws       = "AKIA" + "IOSFODNN7EXAMPLE"
	slack     = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	google    = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	jwt       = "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemBlock  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234567890abcdef\nqwertyuiopASDFGHJKL+/=\n-----END RSA PRIVATE KEY-----"
)

func TestRedactPositives(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"github classic", "token: " + ghp + " end", "token: [REDACTED:github-token] end"},
		{"github oauth", "x gho_" + strings.Repeat("z9", 18) + " y", "x [REDACTED:github-token] y"},
		{"github server", "ghs_" + strings.Repeat("Q7", 18), "[REDACTED:github-token]"},
		{"github pat", "GITHUB " + ghPAT, "GITHUB [REDACTED:github-token]"},
		{"openai project", "key " + openai, "key [REDACTED:openai-key]"},
		{"openai legacy", openaiOld + ".", "[REDACTED:openai-key]."},
		{"anthropic", "ANTHROPIC " + anthropic + "\n", "ANTHROPIC [REDACTED:anthropic-key]\n"},
		{"aws", "id " + aws + " ok", "id [REDACTED:aws-access-key] ok"},
		{"aws temporary", "ASIA" + "ABCDEFGHIJKLMNOP", "[REDACTED:aws-access-key]"},
		{"slack", "slack " + slack, "slack [REDACTED:slack-token]"},
		{"slack user", "xoxp-" + "1234567890-abcdef", "[REDACTED:slack-token]"},
		{"slack webhook", "url https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX done", "url [REDACTED:slack-webhook] done"},
		{"google", "maps " + google + " x", "maps [REDACTED:google-api-key] x"},
		{"jwt", "cookie=" + jwt + ";", "cookie=[REDACTED:jwt];"},
		{"private key", "before\n" + pemBlock + "\nafter", "before\n[REDACTED:private-key]\nafter"},
		{"openssh key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA=\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private-key]"},
		{"pgp key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED:private-key]"},
		{"key cut off", "   1\t-----BEGIN PRIVATE KEY-----\n   2\tMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "   1\t[REDACTED:private-key]"},
		{"key with line numbers", "1\t-----BEGIN EC PRIVATE KEY-----\n2\tMHcCAQEEI\n3\t-----END EC PRIVATE KEY-----\n4\tx", "1\t[REDACTED:private-key]\n4\tx"},
		{"authorization bearer", "Authorization: Bearer abc123def456ghi", "Authorization: Bearer [REDACTED:authorization]"},
		{"authorization curl", `curl -H "authorization: token 0123456789abcdef" x`, `curl -H "authorization: token [REDACTED:authorization]" x`},
		{"authorization basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:authorization]"},
		{"authorization json", `{"Authorization": "Bearer abcdef0123456789"}`, `{"Authorization": "Bearer [REDACTED:authorization]"}`},
		{"bare bearer", "use Bearer a1b2c3d4e5f6g7h8i9j0k1l2 now", "use Bearer [REDACTED:bearer-token] now"},
		{"url password", "postgres://admin:hunter22@db:5432/x", "postgres://admin:[REDACTED:url-password]@db:5432/x"},
		{"password env", "DB_PASSWORD=s3cr3t-value", "DB_PASSWORD=[REDACTED:secret-assignment]"},
		{"password env letters", "DB_PASSWORD=supersecret", "DB_PASSWORD=[REDACTED:secret-assignment]"},
		{"password query", "https://x/api?user=a&password=hunter22&x=1", "https://x/api?user=a&password=[REDACTED:secret-assignment]&x=1"},
		{"secret yaml", "client_secret: 8f7e6d5c4b3a", "client_secret: [REDACTED:secret-assignment]"},
		{"token json", `{"access_token": "ya29.a0AfH6SMBx"}`, `{"access_token": "[REDACTED:secret-assignment]"}`},
		{"api key quoted", `API_KEY = 'abcdefghij'`, `API_KEY = '[REDACTED:secret-assignment]'`},
		{"go literal", `secret := "correcthorse"`, `secret := "[REDACTED:secret-assignment]"`},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:secret-assignment]"},
		{"two in one", ghp + " and " + aws, "[REDACTED:github-token] and [REDACTED:aws-access-key]"},
	}
	r := redact.NewRedactor(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed := r.Redact(c.in)
			if got != c.want || !changed {
				t.Fatalf("Redact(%q)\n got %q (changed %v)\nwant %q", c.in, got, changed, c.want)
			}
		})
	}
	// All of them in one multi-line text, between lines of code that mention the hints
	// (key, token, ://) without secrets, first and last lines included: the same result.
	filler := "for key, token := range m { fetch(\"https://example.com\") } // password"
	var in, want []string
	for i, c := range cases {
		if c.name == "key cut off" {
			continue // runs to the end of the output by design: it also takes what follows
		}
		in, want = append(in, c.in), append(want, c.want)
		if i%3 == 0 {
			in, want = append(in, filler), append(want, filler)
		}
	}
	got, _ := r.Redact(strings.Join(in, "\n"))
	if got != strings.Join(want, "\n") {
		t.Fatalf("multi-line text:\n got %q\nwant %q", got, strings.Join(want, "\n"))
	}
}

func TestRedactNegatives(t *testing.T) {
	cases := []struct{ name, in string }{
		{"github short", "ghp_short123"},
		{"github word", "the ghp_ prefix marks personal tokens"},
		{"openai kebab", "see sk-learn-and-other-libraries-docs"},
		{"openai inside word", "task-" + strings.Repeat("a1", 12)},
		{"openai short", "sk-abc123"},
		{"aws short", "AKIA1234"},
		{"aws lowercase", "akiaiosfodnn7example"},
		{"aws inside word", "XAKIAIOSFODNN7EXAMPLEX"},
		{"slack short", "xoxb-123"},
		{"google short", "AIzaShort"},
		{"jwt one part", "eyJhbGciOiJIUzI1NiJ9 alone"},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"},
		{"certificate", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----"},
		{"authorization variable", `curl -H "Authorization: Bearer $TOKEN" x`},
		{"authorization template", `Authorization: Bearer ${API_TOKEN}`},
		{"bearer prose", "Bearer authentication is described in RFC6750"},
		{"url no password", "https://user@example.com/path and http://localhost:8080/x"},
		{"url variable", "postgres://admin:${DB_PASSWORD}@db/x"},
		{"password type", "password: string;"},
		{"password field access", "const token = config.token"},
		{"password call", "password = get_password2()"},
		{"password kwarg", "connect(password=password_from_env)"},
		{"password env var", "PASSWORD=$DB_PASSWORD"},
		{"password comparison", `if token == "abcdefgh" {`},
		{"password arrow", "token => token.trim()"},
		{"password short", "password=abc"},
		{"password masked", `password: "********"`},
		{"password placeholder", `password: "<your-password>"`},
		{"password template", `secret: "{{ .Values.secret }}"`},
		{"tokenizer", "tokenizer=bert-base-uncased"},
		{"max tokens", "max_tokens=100000"},
		{"token count", "token_count: 123456789"},
		{"go assignment from call", "token := os.Getenv(\"TOKEN\")"},
		{"typescript param", "function login(password: Password) {"},
	}
	r := redact.NewRedactor(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, changed := r.Redact(c.in); changed || got != c.in {
				t.Fatalf("Redact(%q) = %q, want it unchanged", c.in, got)
			}
		})
	}
}

func TestRedactExtraPatterns(t *testing.T) {
	var extra []*regexp.Regexp
	r := redact.NewRedactor(func() []*regexp.Regexp { return extra })
	in := "internal id ACME-12345 and key=acme_live_x9"
	if _, changed := r.Redact("ACME-12345"); changed {
		t.Fatal("redacted before a pattern was added")
	}
	// The function is asked on every use, so a settings reload takes effect at once.
	extra = []*regexp.Regexp{regexp.MustCompile(`ACME-[0-9]+`), regexp.MustCompile(`key=(acme_live_[a-z0-9]+)`)}
	got, changed := r.Redact(in)
	want := "internal id [REDACTED:custom] and key=[REDACTED:custom]"
	if got != want || !changed {
		t.Fatalf("got %q, want %q", got, want)
	}
	names := redact.BuiltinPatternNames()
	if len(names) < 12 || names[0] != "private-key" {
		t.Fatalf("builtin names: %v", names)
	}
}

func TestRedactHook(t *testing.T) {
	hook := redact.NewRedactor(nil).Hook()
	ctx := context.Background()
	img := llm.Content{Type: llm.ContentImage, Data: "iVBOR" + ghp, MimeType: "image/png"}
	content := []llm.Content{llm.Text("clean"), llm.Text("leak " + ghp), img}
	in := toolexec.AfterInput{
		Call:    llm.ToolCall{ID: "c1", Name: "bash"},
		Result:  toolexec.Result{Content: content, Details: map[string]any{"raw": ghp}},
		IsError: false,
	}
	o, err := hook(ctx, in)
	if err != nil || o == nil {
		t.Fatalf("hook: %v %v", o, err)
	}
	if o.Details != nil || o.IsError != nil || o.Terminate != nil {
		t.Fatalf("the hook must replace content only: %+v", o)
	}
	if len(o.Content) != 3 || o.Content[0].Text != "clean" || o.Content[1].Text != "leak [REDACTED:github-token]" || o.Content[2].Data != img.Data || o.Content[2].Type != llm.ContentImage {
		t.Fatalf("content: %+v", o.Content)
	}
	if content[1].Text != "leak "+ghp {
		t.Fatal("the hook modified the input's content")
	}
	// Nothing to redact: nil, so the result is kept as it is.
	in.Result.Content = []llm.Content{llm.Text("nothing here"), img}
	if o, err := hook(ctx, in); o != nil || err != nil {
		t.Fatalf("clean output: %+v %v, want nil", o, err)
	}
}

// Progress is redacted as a result is, with a text's last word held back until its end comes
// (it may be the start of a secret); content that needs nothing is returned as it is.
func TestRedactProgress(t *testing.T) {
	r := redact.NewRedactor(nil)
	img := llm.Content{Type: llm.ContentImage, Data: "x", MimeType: "image/png"}
	in := []llm.Content{llm.Text("token " + ghp + " and ghp_partial"), img}
	out := r.Progress(in)
	if len(out) != 2 || out[0].Text != "token [REDACTED:github-token] and …" || out[1].Data != img.Data || in[0].Text != "token "+ghp+" and ghp_partial" {
		t.Errorf("progress %+v (input %+v)", out, in)
	}
	clean := []llm.Content{llm.Text("all done\n")}
	if got := r.Progress(clean); &got[0] != &clean[0] {
		t.Error("clean progress was copied")
	}
}

// A known secret (pid's API key in its environment) is redacted in tool output in its
// encodings too: `echo $OPENAI_API_KEY | base64` and `xxd -p` passed it on (issue 19).
func TestRedactKnownSecretEncodings(t *testing.T) {
	key := "sk-" + "local-Qm4Zr8Tx2Wv6Kp1Ns9Lb3Hd7"
	env := []string{"OPENAI_API_KEY=" + key, "HOME=/root", "GIT_ASKPASS=/usr/lib/git-core/askpass", "SHORT_TOKEN=ollama",
		"MY_MODEL_VAR=" + strings.Repeat("Zz9", 5), "PATH=/usr/bin"}
	secrets := redact.EnvSecrets(env, "MY_MODEL_VAR")
	if len(secrets) != 2 || secrets["OPENAI_API_KEY"] != key || secrets["MY_MODEL_VAR"] == "" {
		t.Fatalf("EnvSecrets = %v, want OPENAI_API_KEY and MY_MODEL_VAR only", secrets)
	}
	r := redact.NewRedactor(nil).WithKnown(secrets)
	hexKey := hex.EncodeToString([]byte(key))
	for name, out := range map[string]string{
		"plain":       "key=" + key,
		"base64":      base64.StdEncoding.EncodeToString([]byte(key+"\n")) + "\n",
		"base64 url":  base64.URLEncoding.EncodeToString([]byte("x" + key)),
		"base64 off2": base64.StdEncoding.EncodeToString([]byte("xy" + key)),
		"hex":         hexKey + "0a\n",
		"HEX":         strings.ToUpper(hexKey),
		"xxd split":   hexKey[:40] + "\n" + hexKey[40:],
		"masked":      "Incorrect API key: " + key[:12] + "****" + key[len(key)-10:],
	} {
		got, changed := r.Redact(out)
		if !changed || !strings.Contains(got, "[REDACTED:env OPENAI_API_KEY]") {
			t.Errorf("%s: %q not redacted: %q", name, out, got)
		}
		for _, enc := range []string{key[3:15], key[len(key)-9:], hexKey[10:26], hexKey[46:62],
			base64.StdEncoding.EncodeToString([]byte(key))[4:16]} {
			if strings.Contains(got, enc) || strings.Contains(strings.ToLower(got), enc) {
				t.Errorf("%s: %q still holds %q", name, got, enc)
			}
		}
	}
	// Short "secrets" are not searched for: words stay whole.
	if got, changed := r.Redact("maximum context length; run ollama"); changed {
		t.Errorf("text without a secret changed: %q", got)
	}
	if got, _ := redact.NewRedactor(nil).WithKnown(map[string]string{"K": "x"}).Redact("maximum"); got != "maximum" {
		t.Errorf("a one-letter secret changed a word: %q", got)
	}
}

// The keys pid login saved are asked for on every use (a key saved while pid runs is
// redacted from then on) and replaced, encodings included, as [REDACTED:credentials NAME].
func TestRedactSavedKeys(t *testing.T) {
	key := "Vr7Qp2Wm9Xk4Lt8Zn3Hb6Jd1"
	var saved map[string]*secret.Secret
	r := redact.NewRedactor(nil).WithSaved(func() map[string]*secret.Secret { return saved })
	if got, changed := r.Redact("k=" + key); changed {
		t.Fatalf("nothing saved yet, but %q", got)
	}
	saved = map[string]*secret.Secret{"openrouter.ai": secret.New(key)}
	got, _ := r.Redact("k=" + key + " b=" + base64.StdEncoding.EncodeToString([]byte(key)))
	if want := "k=[REDACTED:credentials openrouter.ai] b=[REDACTED:credentials openrouter.ai]"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}
