// This file keeps API keys out of text: every error a provider returns passes through
// Redact, and the text and thinking a server streams back pass through the key's Secret as
// they arrive (see Builder.Hide).

package wire

import "github.com/pid-agent/pid/internal/secret"

// Redacted is what replaces a key, or a fragment of one, in text.
const Redacted = "[redacted]"

// Secret is a key made ready to be found in text (package secret): the key itself, runs
// of 8 or more of its characters, and its base64, hex and percent encodings.
type Secret = secret.Secret

// NewSecret prepares key for Redact and Builder.Hide; an empty key redacts nothing.
func NewSecret(key string) *Secret { return secret.New(key) }

// Redact returns s with the key, and every run of at least 8 characters that also occurs
// in it or in its encodings, replaced by "[redacted]". An empty key redacts nothing; one
// shorter than 8 characters is replaced only where it stands as a whole word (a key of "x"
// leaves "maximum" alone).
func Redact(s, key string) string { return secret.New(key).Replace(s, Redacted) }
