// This file knows the context windows of common models.

package compact

import "strings"

// DefaultContextWindow is the window of a model ContextWindow does not know.
const DefaultContextWindow = 128000

// windows maps a model family, as the start of a model id, to its context window in tokens.
// The longest family that starts the id wins, and it must end there or before a character
// that is not a letter or digit: "gpt-4" covers "gpt-4-0613" and "gpt-4.5" would too, but
// not "gpt-4o", which has its own entry.
//
// Sources:
//   - Anthropic: the models overview of the Claude docs gives 200K tokens for every Claude 3,
//     3.5, 3.7, 4, 4.1 and 4.5 model (Sonnet 4 and 4.5 reach 1M only with a beta header pid
//     does not send). Claude 2.1: 200K; Claude 2.0 and Instant: 100K.
//   - OpenAI: the model pages of platform.openai.com/docs/models (also in pi's
//     models.generated.ts, from models.dev): gpt-4.1, -mini, -nano 1,047,576; gpt-4o and
//     -mini 128,000; gpt-4-turbo and the 1106/0125 previews 128,000; gpt-4 8,192; gpt-4-32k
//     32,768; gpt-3.5-turbo 16,385; o1, o3, o3-mini, o4-mini, codex-mini 200,000; o1-mini
//     and o1-preview 128,000; gpt-5, -mini, -nano, 5.1, 5.2 and their codex models 400,000
//     (of which at most 128,000 output, so the input limit is 272,000); the gpt-5 chat
//     models 128,000; gpt-4.5-preview 128,000; gpt-oss 131,072.
//   - Models run by Ollama, LM Studio, llama.cpp or vLLM: the length the model was trained
//     for, from its model card on Hugging Face and its page on ollama.com/library (the
//     "context" figure, which is also what `ollama show` prints as "context length"). A
//     local server may run a model with a smaller window (Ollama's num_ctx, llama.cpp's
//     --ctx-size, LM Studio's context length) and Ollama then drops the start of the
//     prompt silently; set model.contextWindow to the server's window in that case.
var windows = map[string]int{
	"claude":         200000,
	"claude-2":       100000,
	"claude-2.1":     200000,
	"claude-instant": 100000,

	"gpt-3.5-turbo":     16385,
	"gpt-4":             8192,
	"gpt-4-32k":         32768,
	"gpt-4-turbo":       128000,
	"gpt-4-1106":        128000,
	"gpt-4-0125":        128000,
	"gpt-4-vision":      128000,
	"gpt-4.1":           1047576,
	"gpt-4.5":           128000,
	"gpt-4o":            128000,
	"chatgpt-4o":        128000,
	"o1":                200000,
	"o1-mini":           128000,
	"o1-preview":        128000,
	"o3":                200000,
	"o4-mini":           200000,
	"codex-mini":        200000,
	"gpt-5":             400000,
	"gpt-5-chat":        128000,
	"gpt-5.1-chat":      128000,
	"gpt-5.2-chat":      128000,
	"gpt-oss":           131072,
	"llama3":            8192,
	"llama3.1":          131072,
	"llama3.2":          131072,
	"llama3.3":          131072,
	"llama-3":           8192,
	"llama-3.1":         131072,
	"llama-3.2":         131072,
	"llama-3.3":         131072,
	"codellama":         16384,
	"qwen2.5":           32768,
	"qwen2.5-coder":     32768,
	"qwen3":             40960,
	"qwen3-coder":       262144,
	"deepseek-r1":       131072,
	"deepseek-coder-v2": 163840,
	"mistral":           32768,
	"mistral-nemo":      131072,
	"mixtral":           32768,
	"devstral":          131072,
	"gemma2":            8192,
	"gemma3":            131072, // gemma3:1b has 32,768
	"phi4":              16384,
	"starcoder2":        16384,
	"mistral-small3.1":  131072,
	"mistral-small3.2":  131072,
}

// ContextWindow returns the context window, in tokens, of the model named modelID: the
// window of its family in the table above, or DefaultContextWindow when the family is not
// known. Case does not matter, and so do not a provider's or an organisation's prefix
// ("anthropic/claude-sonnet-4.5" as OpenRouter names it, "Qwen/Qwen2.5-Coder-7B-Instruct",
// Bedrock's "us.anthropic.claude-…") nor an Ollama tag ("qwen2.5-coder:7b").
func ContextWindow(modelID string) int {
	id := strings.ToLower(strings.TrimSpace(modelID))
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if i := strings.Index(id, "anthropic."); i >= 0 {
		id = id[i+len("anthropic."):]
	}
	best, window := 0, DefaultContextWindow
	for family, w := range windows {
		if len(family) > best && strings.HasPrefix(id, family) && (len(id) == len(family) || !alnum(id[len(family)])) {
			best, window = len(family), w
		}
	}
	return window
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
