package relay

import (
	"context"
	"encoding/json"
	"net/http"
)

// CallOptions are per-call settings.
type CallOptions struct {
	// IdempotencyKey is sent on every attempt (default: a fresh UUID per call, reused by its retries). With your
	// own key, the aliases derive from it under the device alias secret, so a retry sends the same bytes.
	IdempotencyKey string
	// Traceparent is the W3C traceparent (default: a fresh one).
	Traceparent string
}

// Meta is the relay's metadata of an answer.
type Meta struct {
	RequestID string
	// Receipt is the decoded receipt-v2 (X-Service-Receipt-V2 header or the stream's receipt-v2 trailer).
	Receipt map[string]any
	// ReceiptVerified: nil without a receipt; else the offline verdict against the gateway's JWKS.
	ReceiptVerified *bool
	// ReceiptVerification is the verdict (valid, reason, checks).
	ReceiptVerification *Verification
	// TokenisedRequest is exactly what left this device (what the provider saw).
	TokenisedRequest json.RawMessage
	// Attestation is the X-Service-Attestation header value sent with the call (what the gateway countersigns).
	Attestation string
	// Countersignature is the gateway's v3 countersignature of the attestation (X-Service-Receipt-V3, decoded; JSON
	// answers only: the gateway does not countersign streams).
	Countersignature map[string]any
	// CountersignatureVerified: nil without one; else the offline verdict, bound to Attestation.
	CountersignatureVerified     *bool
	CountersignatureVerification *Verification
}

// ChatMessage is one OpenAI chat message. Content is a string or a list of parts.
type ChatMessage struct {
	Role       string `json:"role"`
	Content    any    `json:"content,omitempty"`
	Name       string `json:"name,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolCalls  any    `json:"tool_calls,omitempty"`
}

// ChatCompletionParams is an OpenAI chat completions request; Extra holds any other member (temperature, tools...).
type ChatCompletionParams struct {
	Model     string
	Messages  []ChatMessage
	MaxTokens int
	Extra     map[string]any
}

func (p ChatCompletionParams) body(stream bool) map[string]any {
	b := map[string]any{}
	for k, v := range p.Extra {
		b[k] = v
	}
	b["model"] = p.Model
	b["messages"] = p.Messages
	if p.MaxTokens > 0 {
		b["max_tokens"] = p.MaxTokens
	}
	if stream {
		b["stream"] = true
	}
	return b
}

// ChatCompletion is an OpenAI chat completion with the originals restored; Raw is the whole answer.
type ChatCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Message      ChatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage map[string]any  `json:"usage"`
	Raw   json.RawMessage `json:"-"`
	Meta  Meta            `json:"-"`
}

// Text is the first choice's content when it is a string.
func (c *ChatCompletion) Text() string {
	if len(c.Choices) == 0 {
		return ""
	}
	s, _ := c.Choices[0].Message.Content.(string)
	return s
}

// ChatService groups chat routes.
type ChatService struct{ Completions *ChatCompletionsService }

// ChatCompletionsService is client.Chat.Completions.
type ChatCompletionsService struct{ c *Client }

// Create sends a chat completion (tokenised and attested on this device) and answers it with the originals restored.
func (s *ChatCompletionsService) Create(ctx context.Context, p ChatCompletionParams, opts ...CallOptions) (*ChatCompletion, error) {
	var out ChatCompletion
	if err := s.c.relayJSON(ctx, "chat.completions", p.body(false), first(opts), &out, &out.Raw, &out.Meta); err != nil {
		return nil, err
	}
	return &out, nil
}

// NewStreaming sends a streamed chat completion; read it with Next/Current/Err and Close it.
func (s *ChatCompletionsService) NewStreaming(ctx context.Context, p ChatCompletionParams, opts ...CallOptions) (*Stream, error) {
	return s.c.relayStream(ctx, "chat.completions", p.body(true), first(opts))
}

// MessageParams is an Anthropic messages request; Extra holds any other member.
type MessageParams struct {
	Model     string
	MaxTokens int
	System    any
	Messages  []ChatMessage
	Extra     map[string]any
}

func (p MessageParams) body(stream bool) map[string]any {
	b := map[string]any{}
	for k, v := range p.Extra {
		b[k] = v
	}
	b["model"], b["messages"], b["max_tokens"] = p.Model, p.Messages, p.MaxTokens
	if p.System != nil {
		b["system"] = p.System
	}
	if stream {
		b["stream"] = true
	}
	return b
}

// Message is an Anthropic message with the originals restored.
type Message struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Role    string `json:"role"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
	} `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      map[string]any  `json:"usage"`
	Raw        json.RawMessage `json:"-"`
	Meta       Meta            `json:"-"`
}

// MessagesService is client.Messages.
type MessagesService struct{ c *Client }

// Create sends an Anthropic message.
func (s *MessagesService) Create(ctx context.Context, p MessageParams, opts ...CallOptions) (*Message, error) {
	var out Message
	if err := s.c.relayJSON(ctx, "messages", p.body(false), first(opts), &out, &out.Raw, &out.Meta); err != nil {
		return nil, err
	}
	return &out, nil
}

// NewStreaming sends a streamed Anthropic message (events with originals restored).
func (s *MessagesService) NewStreaming(ctx context.Context, p MessageParams, opts ...CallOptions) (*Stream, error) {
	return s.c.relayStream(ctx, "messages", p.body(true), first(opts))
}

// EmbeddingParams is an OpenAI embeddings request: Input is a string or a list of strings. Values get
// device-stable aliases, so the same value embeds the same way across calls.
type EmbeddingParams struct {
	Model string
	Input any
	Extra map[string]any
}

// Embeddings is an OpenAI embeddings answer.
type Embeddings struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage map[string]any  `json:"usage"`
	Raw   json.RawMessage `json:"-"`
	Meta  Meta            `json:"-"`
}

// EmbeddingsService is client.Embeddings.
type EmbeddingsService struct{ c *Client }

// Create sends an embeddings request.
func (s *EmbeddingsService) Create(ctx context.Context, p EmbeddingParams, opts ...CallOptions) (*Embeddings, error) {
	b := map[string]any{}
	for k, v := range p.Extra {
		b[k] = v
	}
	b["model"], b["input"] = p.Model, p.Input
	var out Embeddings
	if err := s.c.relayJSON(ctx, "embeddings", b, first(opts), &out, &out.Raw, &out.Meta); err != nil {
		return nil, err
	}
	return &out, nil
}

// ModelsService is client.Models.
type ModelsService struct{ c *Client }

// ModelList is GET /api/v1/models.
type ModelList struct {
	Object string `json:"object"`
	Data   []struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
	Raw json.RawMessage `json:"-"`
}

// List answers the models the gateway offers.
func (s *ModelsService) List(ctx context.Context) (*ModelList, error) {
	c := s.c
	if _, err := c.ready(ctx); err != nil {
		return nil, err
	}
	h, err := c.headers(CallOptions{}, false)
	if err != nil {
		return nil, err
	}
	res, err := c.send(ctx, "GET", "/api/v1/models", h, nil, false)
	if err != nil {
		return nil, err
	}
	raw, _ := readAll(res.Body, 64<<20)
	var out ModelList
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, &Error{Code: "invalid_answer", Status: res.StatusCode, Message: "the models answer is not JSON", Sent: true}
	}
	out.Raw = raw
	return &out, nil
}

func first(opts []CallOptions) CallOptions {
	if len(opts) > 0 {
		return opts[0]
	}
	return CallOptions{}
}

func (c *Client) headers(o CallOptions, write bool) (map[string]string, error) {
	if c.apiKey == "" {
		return nil, configError("this call needs a gateway key: give WithAPIKey or WithAPIKeyFile")
	}
	tp := o.Traceparent
	if tp == "" {
		tp = NewTraceparent()
	}
	h := map[string]string{"authorization": "Bearer " + c.apiKey, "accept": "application/json", "traceparent": tp}
	if write {
		k := o.IdempotencyKey
		if k == "" {
			k = newUUID()
		}
		h["idempotency-key"] = k
		h["content-type"] = "application/json"
	}
	return h, nil
}

// relay prepares, probes and sends one relay call.
func (c *Client) relay(ctx context.Context, route string, body map[string]any, o CallOptions, stream bool) (*prepared, *http.Response, error) {
	if c.apiKey == "" {
		return nil, nil, configError("this call needs a gateway key: give WithAPIKey or WithAPIKeyFile")
	}
	p, err := c.prepare(route, body, o.IdempotencyKey)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.ready(ctx); err != nil {
		return nil, nil, err
	}
	h, _ := c.headers(o, true)
	for k, v := range p.headers {
		h[k] = v
	}
	if stream {
		h["accept"] = "text/event-stream"
	}
	res, err := c.send(ctx, "POST", routePaths[route], h, p.body, stream)
	return p, res, err
}

func (c *Client) relayJSON(ctx context.Context, route string, body map[string]any, o CallOptions, out any, raw *json.RawMessage, meta *Meta) error {
	p, res, err := c.relay(ctx, route, body, o, false)
	if err != nil {
		return err
	}
	answer, _ := readAll(res.Body, 64<<20)
	restored, err := detokeniseJSON(answer, p.mapJSON)
	if err != nil {
		return &Error{Code: "invalid_answer", Status: res.StatusCode, RequestID: res.Header.Get("x-request-id"), Message: "the gateway's answer is not JSON: " + err.Error(), Sent: true}
	}
	if err := json.Unmarshal(restored, out); err != nil {
		return &Error{Code: "invalid_answer", Status: res.StatusCode, Message: err.Error(), Sent: true}
	}
	*raw = restored
	meta.RequestID = res.Header.Get("x-request-id")
	meta.TokenisedRequest = p.body
	meta.Attestation = p.headers["x-service-attestation"]
	meta.Receipt = decodeHeader(res.Header.Get("x-service-receipt-v2"))
	meta.ReceiptVerified, meta.ReceiptVerification = c.verifyMeta(ctx, meta.Receipt, "")
	meta.Countersignature = decodeHeader(res.Header.Get("x-service-receipt-v3"))
	meta.CountersignatureVerified, meta.CountersignatureVerification = c.verifyMeta(ctx, meta.Countersignature, meta.Attestation)
	return nil
}

// ResponseParams is an OpenAI Responses request: Input is a string or a list of input items.
type ResponseParams struct {
	Model string
	Input any
	Extra map[string]any
}

// Response is an OpenAI Responses answer with the originals restored; OutputText joins its output_text parts.
type Response struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Status string `json:"status"`
	Model  string `json:"model"`
	Output []struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Raw  json.RawMessage `json:"-"`
	Meta Meta            `json:"-"`
}

// OutputText is the text of every output_text part.
func (r *Response) OutputText() string {
	out := ""
	for _, o := range r.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				out += c.Text
			}
		}
	}
	return out
}

// ResponsesService is client.Responses (POST /api/v1/responses).
type ResponsesService struct{ c *Client }

// Create sends a Responses request.
func (s *ResponsesService) Create(ctx context.Context, p ResponseParams, opts ...CallOptions) (*Response, error) {
	b := map[string]any{}
	for k, v := range p.Extra {
		b[k] = v
	}
	if v, ok := b["stream"]; ok && v != false {
		return nil, configError("for a streamed Responses call use client.Responses.NewStreaming")
	}
	b["model"], b["input"] = p.Model, p.Input
	var out Response
	if err := s.c.relayJSON(ctx, "responses", b, first(opts), &out, &out.Raw, &out.Meta); err != nil {
		return nil, err
	}
	return &out, nil
}

// NewStreaming sends a streamed Responses request: the Responses events (response.output_text.delta, ...,
// response.completed) with the originals restored as they stream.
func (s *ResponsesService) NewStreaming(ctx context.Context, p ResponseParams, opts ...CallOptions) (*Stream, error) {
	b := map[string]any{}
	for k, v := range p.Extra {
		b[k] = v
	}
	b["model"], b["input"], b["stream"] = p.Model, p.Input, true
	return s.c.relayStream(ctx, "responses", b, first(opts))
}

// TokenCount is Anthropic's token count of a messages request.
type TokenCount struct {
	InputTokens int             `json:"input_tokens"`
	Raw         json.RawMessage `json:"-"`
	Meta        Meta            `json:"-"`
}

// CountTokens counts the input tokens of a messages request (POST /api/v1/messages/count_tokens), tokenised on
// this device like the request itself (MaxTokens is not sent: the route does not take it).
func (s *MessagesService) CountTokens(ctx context.Context, p MessageParams, opts ...CallOptions) (*TokenCount, error) {
	b := p.body(false)
	delete(b, "max_tokens")
	var out TokenCount
	if err := s.c.relayJSON(ctx, "messages.count_tokens", b, first(opts), &out, &out.Raw, &out.Meta); err != nil {
		return nil, err
	}
	return &out, nil
}
