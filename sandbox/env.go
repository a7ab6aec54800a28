// This file decides which of pid's environment variables look like secrets, which a
// sandboxed command does not get unless the user lets them through (sandbox.env.allow).

package sandbox

import (
	"slices"
	"strings"
)

// secretParts are pieces of a variable's name (upper-cased) that mark a secret anywhere in
// it; secretSuffixes at its end; secretPrefixes at its start (the clouds' variables);
// secretNames whole names that the rest miss.
var (
	secretParts    = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "APIKEY", "ACCESS_KEY", "AUTH_KEY"}
	secretSuffixes = []string{"_KEY", "_PAT", "_AUTH"}
	secretPrefixes = []string{"AWS_", "AZURE_", "ARM_CLIENT", "GOOGLE_APPLICATION_", "GCLOUD_", "CLOUDSDK_AUTH", "DIGITALOCEAN_", "HCLOUD_", "VAULT_", "OP_SERVICE_ACCOUNT", "DOCKER_AUTH"}
	secretNames    = []string{"GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "NODE_AUTH_TOKEN", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "PYPI_TOKEN", "TWINE_PASSWORD", "CARGO_REGISTRY_TOKEN", "SENTRY_AUTH_TOKEN", "KUBECONFIG_DATA", "DATABASE_URL", "PGPASSWORD", "MYSQL_PWD", "REDIS_URL"}
)

// SecretEnv reports whether the environment variable name looks like it holds a secret:
// *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*, *_KEY and the like, the clouds' variables
// (AWS_*, AZURE_*, GOOGLE_APPLICATION_CREDENTIALS...) and the known providers' (GITHUB_TOKEN,
// GH_TOKEN, NPM_TOKEN, ...), in any case.
func SecretEnv(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(secretNames, n) {
		return true
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
