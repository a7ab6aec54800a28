// This file recognizes a provider's "the context is too long" failure.

package compact

import (
	"regexp"
	"strings"

	"github.com/pid-agent/pid/llm"
)

// overflowTexts are what providers and local servers say, lower-cased, when the prompt does
// not fit the model's window (the examples are their own words). pid's providers keep the
// server's words in the error text, after their own sentence.
var overflowTexts = []string{
	// pid's own wording for an HTTP 413 or a 400 it recognized (provider/internal/wire).
	"the conversation is too long for model",
	// OpenAI: code context_length_exceeded, "This model's maximum context length is 128000
	// tokens. However, your messages resulted in 130412 tokens. Please reduce the length of
	// the messages." vLLM and OpenRouter say "maximum context length is" too.
	"context_length_exceeded",
	"maximum context length",
	// OpenAI Responses API: "Your input exceeds the context window of this model."
	"exceeds the context window",
	// Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"; "input length and
	// `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or
	// `max_tokens` and try again".
	"prompt is too long",
	"exceed context limit",
	// llama.cpp's server: "the request exceeds the available context size. try increasing
	// the context size or enable context shift" (type exceed_context_size_error); older
	// servers: "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)".
	"exceeds the available context size",
	"exceed_context_size_error",
	"cannot truncate prompt with n_keep",
	// llama-cpp-python: "Requested tokens (2285) exceed context window of 2048".
	"exceed context window of",
	// Ollama with truncation off: "the input length exceeds the context length".
	"exceeds the context length",
	// LM Studio: "Trying to keep the first 10136 tokens when context the overflows. However,
	// the model is loaded with context length of only 7866 tokens, which is not enough."
	// Its MLX engine: "Context size has been exceeded".
	"tokens when context the overflows",
	"context length of only",
	"greater than the context length",
	"context size has been exceeded",
	// vLLM: "The decoder prompt (length 17772) is longer than the maximum model length of
	// 16384." and, in V1, "Prompt length of 2048 is longer than the maximum model length of
	// 2048."
	"longer than the maximum model length",
	// Google: "The input token count (1196265) exceeds the maximum number of tokens allowed
	// (1048575)". Groq: "Please reduce the length of the messages or completion". Mistral:
	// "Prompt contains 40000 tokens ... too large for model with 32768 maximum context
	// length". Kimi: "Your request exceeded model token limit".
	"exceeds the maximum number of tokens",
	"reduce the length of the messages",
	"too large for model with",
	"exceeded model token limit",
	// Generic wordings several servers use.
	"context length exceeded",
	"context window exceeded",
	"context_window_exceeded",
	"too many tokens",
	"token limit exceeded",
}

// overflowPatterns are wordings with a number in them.
var overflowPatterns = []*regexp.Regexp{
	regexp.MustCompile(`maximum prompt length is \d+`),                // xAI
	regexp.MustCompile(`prompt token count of \d+ exceeds the limit`), // GitHub Copilot
}

// notOverflow are wordings of failures that mention tokens or limits but are about rate or
// quota, which compacting does not help.
var notOverflow = []string{"rate limit", "rate_limit", "rate-limit", "quota", "per minute", "tokens per min"}

// IsContextOverflow reports whether m is an assistant message whose model call failed
// (StopReason error) because the prompt did not fit the model's context window, as OpenAI,
// Anthropic, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio and others word it. Rate and
// quota failures are not overflows even when they speak of tokens. A nil m, a successful
// or aborted message, and one cut off at the output limit (StopReason length) are not.
//
// Ollama by default shortens an over-long prompt without failing; no message reveals that.
func IsContextOverflow(m *llm.Message) bool {
	if m == nil || m.Role != llm.RoleAssistant || m.StopReason != llm.StopError {
		return false
	}
	text := strings.ToLower(m.ErrorMessage)
	for _, s := range notOverflow {
		if strings.Contains(text, s) {
			return false
		}
	}
	for _, s := range overflowTexts {
		if strings.Contains(text, s) {
			return true
		}
	}
	for _, p := range overflowPatterns {
		if p.MatchString(text) {
			return true
		}
	}
	return false
}
