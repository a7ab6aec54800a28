// This file is the part of a provider's New that both APIs share: the model and base URL
// checks, the base URL's default, and how error text names the server.

package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// API describes one model API for Check.
type API struct {
	// Pkg starts the text of Check's errors, e.g. "openai".
	Pkg string
	// Name is how error text names the API's own server, e.g. "OpenAI". A server at
	// another host is "the <Name>-compatible server at <base URL>".
	Name string
	// Host is the host of the API's own server, e.g. "api.openai.com" (case does not
	// matter).
	Host string
	// DefaultBaseURL is the API root used when none is given.
	DefaultBaseURL string
	// CompatibleHint is the BaseURLHint of a compatible server's Info ("" for none).
	CompatibleHint string
}

// Check does what every provider's New does with the model and base URL it is given. in
// holds them as the provider's options give them (Model, BaseURL, KeyEnv, HasKey); Check
// returns in with BaseURL defaulted to a.DefaultBaseURL and stripped of trailing slashes,
// which is the API root the provider uses, and Name (and, for a compatible server,
// BaseURLHint) set. It fails when Model is blank or BaseURL is not an http or https URL.
func (a API) Check(in Info) (Info, error) {
	if strings.TrimSpace(in.Model) == "" {
		return Info{}, errors.New(a.Pkg + ": a model id is required")
	}
	if in.BaseURL == "" {
		in.BaseURL = a.DefaultBaseURL
	}
	in.BaseURL = strings.TrimRight(in.BaseURL, "/")
	u, err := url.Parse(in.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Info{}, fmt.Errorf("%s: base URL %q is not an http or https URL", a.Pkg, in.BaseURL)
	}
	in.Name = a.Name
	if !strings.EqualFold(u.Hostname(), a.Host) {
		in.Name = "the " + a.Name + "-compatible server at " + in.BaseURL
		in.BaseURLHint = a.CompatibleHint
	}
	return in, nil
}
