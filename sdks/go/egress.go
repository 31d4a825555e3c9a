package relay

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A fail-closed guard in front of the engine, until the Rust engine reads sdks/vectors/egress-policy.json: its
// pr_tokenise_request tokenises message text only and passes every other field as it is (measured: `user`,
// `metadata` values, `messages[].name` and image parts went out verbatim), and the gateway accepts policy-named
// fields such as `user`. So this SDK sends only fields it knows carry no user text, plus the text fields the
// engine tokenises, and refuses the rest before anything is sent: 400 unsupported_field (details.path), 415
// unsupported_content for media. Narrower than the policy (no tokenise-stable USER_ aliases yet): what it refuses,
// the other SDKs would alias or refuse too.

var structural = map[string]map[string]bool{
	"chat.completions": set("model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n",
		"stream", "stop", "presence_penalty", "frequency_penalty", "seed", "response_format", "tools", "tool_choice",
		"stream_options", "logprobs", "top_logprobs", "parallel_tool_calls"),
	"messages":   set("model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k", "stop_sequences", "stream", "tools", "tool_choice"),
	"embeddings": set("model", "input", "dimensions", "encoding_format"),
}

var messageFields = set("role", "content", "tool_calls", "tool_call_id")

var textParts = map[string]map[string]bool{
	"chat.completions": set("text"),
	"messages":         set("text", "tool_use", "tool_result"),
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func refuse(path, format string, args ...any) *Error {
	return &Error{Status: 400, Code: "unsupported_field", Message: fmt.Sprintf(format, args...) + " (nothing was sent)", Details: map[string]any{"path": path}}
}

func pointer(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		switch v := p.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1"))
		}
	}
	return b.String()
}

// checkEgress answers nil when body holds only fields this SDK sends safely.
func checkEgress(route string, raw []byte) error {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil // the engine answers invalid_request / invalid_json
	}
	allowed := structural[route]
	for k := range body {
		if !allowed[k] {
			return refuse(pointer(k), "the field %q is not sent by the Go SDK yet: it may hold personal data the engine does not tokenise", k)
		}
	}
	msgs, _ := body["messages"].([]any)
	for i, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			continue
		}
		for k := range msg {
			if !messageFields[k] {
				return refuse(pointer("messages", i, k), "the message field %q is not sent by the Go SDK yet (it would leave untokenised)", k)
			}
		}
		parts, _ := msg["content"].([]any)
		for j, p := range parts {
			part, ok := p.(map[string]any)
			if !ok {
				continue
			}
			t, _ := part["type"].(string)
			if textParts[route][t] {
				continue
			}
			path := pointer("messages", i, "content", j)
			if strings.Contains(t, "image") || t == "document" || strings.Contains(t, "audio") || t == "file" {
				return &Error{Status: 415, Code: "unsupported_content", Message: fmt.Sprintf("a %q part is media the Go SDK does not send (nothing was sent)", t), Details: map[string]any{"path": path, "kind": t}}
			}
			return refuse(path, "the content part type %q is not sent by the Go SDK yet", t)
		}
	}
	return nil
}
