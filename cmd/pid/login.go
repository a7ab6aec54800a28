// This file is `pid login` and `pid logout`: saving an API key for a model provider in
// pid login's credentials file (package credentials) and a default model in the user's
// settings, with plain numbered line prompts that work in any terminal (an editor's
// included), the key read with the terminal's echo off; `pid login --check` says what is
// configured without printing any key.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pid-agent/pid/credentials"
	"github.com/pid-agent/pid/internal/safefile"
	"github.com/pid-agent/pid/provider"
	"github.com/pid-agent/pid/provider/anthropic"
	"github.com/pid-agent/pid/provider/openai"
	"github.com/pid-agent/pid/settings"
)

// loginChoice is a provider pid login offers.
type loginChoice struct {
	label    string
	provider string
	// base is the API root the key is saved for; "" asks for it (an OpenAI-compatible
	// server).
	base   string
	keyEnv string
	// models are offered as the default model, the first being the default answer.
	models []string
}

var loginChoices = []loginChoice{
	{label: "Anthropic", provider: provider.Anthropic, base: anthropic.DefaultBaseURL, keyEnv: provider.EnvAnthropicKey,
		models: []string{"claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"}},
	{label: "OpenAI", provider: provider.OpenAI, base: openai.DefaultBaseURL, keyEnv: provider.EnvOpenAIKey,
		models: []string{"gpt-5", "gpt-5-mini", "gpt-4.1"}},
	{label: "An OpenAI-compatible server (OpenRouter, Ollama, vLLM, LM Studio, llama.cpp...)", provider: provider.OpenAI},
}

// errInputEnded is a prompt's error when stdin ends before an answer.
var errInputEnded = errors.New("the input ended before an answer")

// prompter asks questions on out and reads the answers from in, one line at a time.
type prompter struct {
	in  *os.File
	out io.Writer
	tty bool
}

// line reads one line from p.in, a byte at a time (nothing read past the line, so a key
// that follows is read with echo off), without its line ending.
func (p *prompter) line() (string, error) {
	var b []byte
	var c [1]byte
	for {
		n, err := p.in.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return strings.TrimRight(string(b), "\r"), nil
			}
			if len(b) < 64<<10 {
				b = append(b, c[0])
			}
			continue
		}
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return strings.TrimRight(string(b), "\r"), nil
			}
			return "", errInputEnded
		}
	}
}

// ask writes question and returns the answer, trimmed. Without a terminal, which would
// echo the answer and its Enter, the line is ended here.
func (p *prompter) ask(question string) (string, error) {
	fmt.Fprint(p.out, question)
	s, err := p.line()
	if !p.tty {
		fmt.Fprintln(p.out)
	}
	return strings.TrimSpace(s), err
}

// choose lists options numbered from 1 and returns the index of the one picked; def (an
// index, -1 for none) is taken on an empty answer.
func (p *prompter) choose(title string, options []string, def int) (int, error) {
	fmt.Fprintln(p.out, title)
	for i, o := range options {
		fmt.Fprintf(p.out, "  %d) %s\n", i+1, o)
	}
	q := fmt.Sprintf("Choose 1-%d: ", len(options))
	if def >= 0 {
		q = fmt.Sprintf("Choose 1-%d [%d]: ", len(options), def+1)
	}
	for {
		a, err := p.ask(q)
		if err != nil {
			return 0, err
		}
		if a == "" && def >= 0 {
			return def, nil
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(options) {
			return n - 1, nil
		}
		fmt.Fprintf(p.out, "Type a number from 1 to %d.\n", len(options))
	}
}

// secret reads a line with the terminal's echo off (turned off before the question is
// written), or a plain line when stdin is not a terminal.
func (p *prompter) secret(question string, echo *echoState) (string, error) {
	if !p.tty {
		return p.ask(question)
	}
	if err := echo.off(p.in); err != nil {
		return "", fmt.Errorf("cannot turn the terminal's echo off, so the key would show: %v", err)
	}
	fmt.Fprint(p.out, question)
	s, err := p.line()
	echo.on()
	fmt.Fprintln(p.out) // the Enter was not echoed
	return strings.TrimSpace(s), err
}

// echoState is the terminal's echo, off while a key is read; a signal turns it back on
// before pid exits.
type echoState struct {
	mu      sync.Mutex
	restore func()
}

func (e *echoState) off(f *os.File) error {
	restore, err := echoOff(f)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.restore = restore
	e.mu.Unlock()
	return nil
}

func (e *echoState) on() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.restore != nil {
		e.restore()
		e.restore = nil
	}
}

// login runs `pid login [--check]` and returns the exit code.
func login(args []string) int {
	if len(args) == 1 && (args[0] == "--check" || args[0] == "-check") {
		return loginCheck(os.Stdout)
	}
	if len(args) > 0 {
		fmt.Fprintln(os.Stderr, "usage: pid login           save an API key and a default model (asks in the terminal)\n       pid login --check   say what is configured (no key is printed)")
		return 2
	}
	echo := &echoState{}
	// A signal ends pid login with the terminal as it was, and nothing saved.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	defer close(done)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			echo.on()
			fmt.Fprintln(os.Stderr, "\npid login: interrupted; nothing was saved")
			os.Exit(130)
		case <-done:
		}
	}()
	p := &prompter{in: os.Stdin, out: os.Stdout, tty: isTerminal(os.Stdin)}
	if err := runLogin(p, echo); err != nil {
		fmt.Fprintln(os.Stderr, "pid login:", err)
		return 1
	}
	return 0
}

// runLogin asks for the provider, the key and the default model, and saves them.
func runLogin(p *prompter, echo *echoState) error {
	path, err := credentials.DefaultPath()
	if err != nil {
		return err
	}
	// Read first: a file that is not private is refused before any key is typed.
	file, err := credentials.Load(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.out, "pid login saves an API key in %s (only you can read it) and a default model in your settings.\n\n", path)
	labels := make([]string, len(loginChoices))
	for i, c := range loginChoices {
		labels[i] = c.label
	}
	i, err := p.choose("Model provider:", labels, -1)
	if err != nil {
		return err
	}
	choice := loginChoices[i]
	base, name := choice.base, choice.provider
	if base == "" {
		for {
			base, err = p.ask("The server's API URL (for example https://openrouter.ai/api/v1 or http://localhost:11434/v1): ")
			if err != nil {
				return err
			}
			if credentials.Origin(base) != "" {
				break
			}
			fmt.Fprintln(p.out, "Give an http:// or https:// URL.")
		}
		base = strings.TrimRight(base, "/")
		u, _ := url.Parse(base)
		name = strings.ToLower(u.Host)
	}
	if choice.keyEnv != "" && strings.TrimSpace(os.Getenv(choice.keyEnv)) != "" {
		fmt.Fprintf(p.out, "Note: %s is set in this environment; pid uses it before the key saved here.\n", choice.keyEnv)
	}
	var key string
	for {
		q := fmt.Sprintf("API key for %s (paste it and press Enter; it is not shown): ", choice.label)
		if choice.base == "" {
			q = "API key for the server (paste it and press Enter; it is not shown; empty if the server needs none): "
		}
		if key, err = p.secret(q, echo); err != nil {
			return err
		}
		if key == "" && choice.base == "" {
			break // a server that needs no key
		}
		problem := keyProblem(key)
		if problem == "" {
			break
		}
		fmt.Fprintln(p.out, problem)
	}
	model := map[string]string{"provider": choice.provider}
	if choice.base == "" {
		model["baseUrl"] = base
		id, err := p.askID("The model's id, as the server names it (for example qwen3:8b): ")
		if err != nil {
			return err
		}
		model["id"] = id
	} else {
		options := append(append([]string(nil), choice.models...), "another model id")
		j, err := p.choose("Default model:", options, 0)
		if err != nil {
			return err
		}
		if j < len(choice.models) {
			model["id"] = choice.models[j]
		} else if model["id"], err = p.askID("Model id: "); err != nil {
			return err
		}
	}
	if key != "" {
		for n, e := range file.Credentials { // one key per server
			if e.Provider == choice.provider && credentials.Origin(e.BaseURL) == credentials.Origin(base) {
				delete(file.Credentials, n)
			}
		}
		file.Credentials[name] = credentials.Entry{Provider: choice.provider, BaseURL: base, APIKey: key, Saved: time.Now().UTC().Truncate(time.Second)}
		madePrivate, err := credentials.Save(path, file)
		if err != nil {
			return err
		}
		if madePrivate {
			fmt.Fprintf(p.out, "Made %s private (mode 0700): it holds the key.\n", filepath.Dir(path))
		}
		fmt.Fprintf(p.out, "Saved the key for %s in %s.\n", name, path)
	}
	settingsPath, err := settings.SetUserMember("model", orderedModel(model))
	if err != nil {
		return err
	}
	fmt.Fprintf(p.out, "Set the default model to %s/%s in %s.\nCheck with: pid login --check\n", model["provider"], model["id"], settingsPath)
	return nil
}

// askID asks for a model id until one is given.
func (p *prompter) askID(question string) (string, error) {
	for {
		id, err := p.ask(question)
		if err != nil || id != "" {
			return id, err
		}
		fmt.Fprintln(p.out, "Give the model's id.")
	}
}

// orderedModel is the model as JSON with its members in the order provider, id, baseUrl.
func orderedModel(m map[string]string) json.RawMessage {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range []string{"provider", "id", "baseUrl"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if i > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(v)
		b.Write(kj)
		b.WriteString(": ")
		b.Write(vj)
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// keyProblem says what is wrong with a pasted key, "" when nothing is. It never quotes the
// key.
func keyProblem(key string) string {
	switch {
	case key == "":
		return "No key was given; paste it, then press Enter."
	case strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "That is not a key: a key has no spaces and no characters beyond ASCII. Paste it again."
	}
	return ""
}

// loginCheck prints what is configured, never a key nor a part of one, and returns 0 when
// the default model (or, without one, some provider) has a key, 1 otherwise.
func loginCheck(w io.Writer) int {
	path, _ := credentials.DefaultPath()
	file, ferr := credentials.Current()
	code := 0
	switch {
	case ferr != nil:
		fmt.Fprintf(w, "Saved keys: NOT read: %v\n", ferr)
		code = 1
	case len(file.Credentials) == 0:
		fmt.Fprintf(w, "Saved keys: none (pid login saves one in %s)\n", path)
	default:
		fmt.Fprintf(w, "Saved keys (%s):\n", path)
		for _, n := range file.Names() {
			e := file.Credentials[n]
			saved := ""
			if !e.Saved.IsZero() {
				saved = ", saved " + e.Saved.Local().Format("2006-01-02")
			}
			fmt.Fprintf(w, "  %-16s %s key for %s%s\n", n, e.Provider, e.BaseURL, saved)
		}
	}
	var set []string
	for _, v := range []string{provider.EnvAnthropicKey, provider.EnvOpenAIKey} {
		if strings.TrimSpace(os.Getenv(v)) != "" {
			set = append(set, v)
		}
	}
	if len(set) > 0 {
		fmt.Fprintf(w, "In the environment: %s (used before a saved key)\n", strings.Join(set, ", "))
	}
	cfg, where, err := userModel()
	switch {
	case err != nil:
		fmt.Fprintf(w, "Default model: %v\n", err)
		return 1
	case cfg == nil:
		fmt.Fprintf(w, "Default model: none in %s (pid login sets one; the editor or a trusted folder's .pid/settings.json may name one)\n", where)
		if len(set) == 0 && (ferr != nil || len(file.Credentials) == 0) {
			return 1
		}
		return code
	}
	fmt.Fprintf(w, "Default model: %s/%s (%s)\n", cfg.Provider, cfg.ID, where)
	if cfg.Provider != provider.OpenAI && cfg.Provider != provider.Anthropic {
		return code
	}
	from, err := provider.KeySource(*cfg)
	switch {
	case err != nil:
		fmt.Fprintf(w, "  its key: missing: %v\n", err)
		return 1
	case from == "":
		fmt.Fprintln(w, "  its key: none needed (an OpenAI-compatible server that asks for none)")
	default:
		fmt.Fprintf(w, "  its key: from %s\n", from)
	}
	return code
}

// userModel returns the "model" of the user's settings file and the file's path; nil when
// it has none.
func userModel() (*provider.Config, string, error) {
	path, err := settings.UserPath()
	if err != nil {
		return nil, "", err
	}
	data, err := safefile.Read(path, safefile.SettingsMax)
	if errors.Is(err, os.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	var top struct {
		Model *provider.Config `json:"model"`
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, path, nil
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, path, fmt.Errorf("%s: %v", path, err)
	}
	return top.Model, path, nil
}

// logout runs `pid logout [NAME]`: it removes the saved key NAME (an entry's name:
// anthropic, openai, or a server's host), or every saved key, and returns the exit code.
// The default model stays in the settings.
func logout(args []string) int {
	if len(args) > 1 || (len(args) == 1 && strings.HasPrefix(args[0], "-")) {
		fmt.Fprintln(os.Stderr, "usage: pid logout [NAME]   remove the key pid login saved for NAME (anthropic, openai, a server's host), or every saved key")
		return 2
	}
	path, err := credentials.DefaultPath()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid logout:", err)
		return 1
	}
	file, err := credentials.Load(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid logout:", err)
		return 1
	}
	names := file.Names()
	if len(args) == 1 {
		want := strings.ToLower(strings.TrimSpace(args[0]))
		if _, ok := file.Credentials[want]; !ok {
			saved := "none"
			if len(names) > 0 {
				saved = strings.Join(names, ", ")
			}
			fmt.Fprintf(os.Stderr, "pid logout: no key is saved for %q (saved: %s)\n", args[0], saved)
			return 1
		}
		names = []string{want}
	}
	if len(names) == 0 {
		fmt.Println("No key is saved; nothing to remove.")
		return 0
	}
	for _, n := range names {
		delete(file.Credentials, n)
	}
	if len(file.Credentials) == 0 {
		err = credentials.Remove(path)
	} else {
		_, err = credentials.Save(path, file)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pid logout:", err)
		return 1
	}
	fmt.Printf("Removed the saved key of %s from %s.\n", strings.Join(names, ", "), path)
	return 0
}
