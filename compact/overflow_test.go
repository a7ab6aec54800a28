// This file tests IsContextOverflow with the error texts of real providers, as they reach
// pid's messages.

package compact_test

import (
	"testing"

	"github.com/pid-agent/pid/compact"
	"github.com/pid-agent/pid/llm"
)

func TestIsContextOverflow(t *testing.T) {
	overflows := []string{
		// pid's providers (provider/internal/wire) after an HTTP 400 or 413.
		`The conversation is too long for model "claude-sonnet-4-5" (HTTP 400: prompt is too long: 213462 tokens > 200000 maximum). Start a new session or shorten the history.`,
		`The conversation is too long for model "gpt-4o" (HTTP 413: Request too large). Start a new session or shorten the history.`,
		// Anthropic.
		`Anthropic rejected the request for model "claude-3-7-sonnet-20250219" (HTTP 400: input length and ` + "`max_tokens`" + ` exceed context limit: 199759 + 8192 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again).`,
		`Anthropic reported an error mid-stream (invalid_request_error: prompt is too long: 201000 tokens > 200000 maximum). Try again.`,
		// OpenAI chat completions and Responses.
		`OpenAI rejected the request for model "gpt-4o" (HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.).`,
		`OpenAI answered HTTP 400: context_length_exceeded.`,
		`OpenAI rejected the request for model "gpt-5" (HTTP 400: Your input exceeds the context window of this model. Please adjust your input and try again.).`,
		// OpenRouter.
		`The OpenAI-compatible server at https://openrouter.ai/api/v1 rejected the request for model "anthropic/claude-sonnet-4.5" (HTTP 400: This endpoint's maximum context length is 200000 tokens. However, you requested about 245301 tokens (229301 of text input, 16000 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.).`,
		// llama.cpp's server, new and old.
		`The OpenAI-compatible server at http://localhost:8080/v1 rejected the request for model "qwen" (HTTP 400: the request exceeds the available context size. try increasing the context size or enable context shift).`,
		`The OpenAI-compatible server at http://localhost:8080/v1 had a server error (HTTP 500: the request exceeds the available context size, try increasing it). Try again in a while.`,
		`The OpenAI-compatible server at http://localhost:1234/v1 rejected the request for model "qwen2.5-coder-7b" (HTTP 400: Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)).`,
		// llama-cpp-python.
		`Requested tokens (2285) exceed context window of 2048`,
		// Ollama with truncate: false.
		`The OpenAI-compatible server at http://localhost:11434/v1 rejected the request for model "llama3.2" (HTTP 400: the input length exceeds the context length).`,
		// vLLM.
		`The OpenAI-compatible server at http://gpu:8000/v1 rejected the request for model "Qwen/Qwen2.5-Coder-32B-Instruct" (HTTP 400: This model's maximum context length is 32768 tokens. However, you requested 33125 tokens (29029 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.).`,
		`The decoder prompt (length 17772) is longer than the maximum model length of 16384. Make sure that ` + "`max_model_len`" + ` is no smaller than the number of text tokens.`,
		`Prompt length of 2048 is longer than the maximum model length of 2048.`,
		// LM Studio.
		`The OpenAI-compatible server at http://localhost:1234/v1 reported an error mid-stream (Trying to keep the first 10136 tokens when context the overflows. However, the model is loaded with context length of only 7866 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input). Try again.`,
		`Context size has been exceeded.`,
		`tokens to keep from the initial prompt is greater than the context length`,
		// Others pi knows.
		`The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).`,
		`This model's maximum prompt length is 131072 but the request contains 537812 tokens.`,
		`Please reduce the length of the messages or completion.`,
		`Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length`,
		`prompt token count of 128500 exceeds the limit of 128000`,
		`Your request exceeded model token limit: 262144 (requested: 300000)`,
		`Error: too many tokens in the prompt`,
	}
	for _, text := range overflows {
		m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: text}
		if !compact.IsContextOverflow(&m) {
			t.Errorf("not recognized as an overflow: %s", text)
		}
	}

	others := []string{
		`Anthropic rate-limited the request (HTTP 429: This request would exceed the rate limit for your organization of 40,000 input tokens per minute). Wait a while and try again.`,
		`OpenAI rate-limited the request (HTTP 429: Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.). Wait a while and try again.`,
		`OpenAI says the account is out of quota (HTTP 429: You exceeded your current quota, please check your plan and billing details.). Check the plan and billing of the key in OPENAI_API_KEY.`,
		`Anthropic is overloaded (HTTP 529: Overloaded). Try again in a while.`,
		`Anthropic rejected the request for model "claude-sonnet-4-5" (HTTP 400: max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5).`,
		`OpenAI does not know model "gpt-6" (HTTP 404: The model gpt-6 does not exist). Check model.id.`,
		`Could not reach the OpenAI-compatible server at http://localhost:11434/v1 (connection refused). Check that the server is running and that model.baseUrl is right.`,
		`scripted model: no turn left for model call 3 (the script has 2 turns)`,
		``,
	}
	for _, text := range others {
		m := llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: text}
		if compact.IsContextOverflow(&m) {
			t.Errorf("taken for an overflow: %q", text)
		}
	}

	overflow := overflows[0]
	notFailed := map[string]*llm.Message{
		"nil":                   nil,
		"a successful answer":   {Role: llm.RoleAssistant, StopReason: llm.StopEnd, ErrorMessage: overflow},
		"an aborted answer":     {Role: llm.RoleAssistant, StopReason: llm.StopAborted, ErrorMessage: overflow},
		"cut at the out limit":  {Role: llm.RoleAssistant, StopReason: llm.StopLength, ErrorMessage: overflow},
		"a user message":        {Role: llm.RoleUser, StopReason: llm.StopError, ErrorMessage: overflow},
		"overflow text as text": {Role: llm.RoleAssistant, StopReason: llm.StopError, Content: []llm.Content{llm.Text(overflow)}},
	}
	for name, m := range notFailed {
		if compact.IsContextOverflow(m) {
			t.Errorf("%s: taken for an overflow", name)
		}
	}
}
