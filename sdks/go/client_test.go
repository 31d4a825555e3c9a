package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "svc_abcdefghijklmnopqrstuvwxyz234567"

func asRelayError(t *testing.T, err error, code string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("want *relay.Error %s, got %v", code, err)
	}
	return e
}

func TestGatewayURLRules(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "http://gateway.example.com", "https://u:p@gateway.example.com", "https://g.example.com/?a=1", "not a url"} {
		_, err := NewClient(bad, WithAPIKey(testKey))
		asRelayError(t, err, "configuration_error")
	}
	for in, want := range map[string]string{"https://g.example.com/": "https://g.example.com", "http://127.0.0.1:8080": "http://127.0.0.1:8080", "http://localhost:1/base/": "http://localhost:1/base", "http://[::1]:9": "http://[::1]:9"} {
		c, err := NewClient(in, WithAPIKey(testKey))
		if err != nil || c.GatewayURL != want {
			t.Errorf("%s: %v %v", in, c, err)
		}
	}
}

func TestKeyFileRules(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte(testKey+"\n"), 0o644)
	os.Chmod(open, 0o644)
	_, err := NewClient("https://g.example.com", WithAPIKeyFile(open))
	if e := asRelayError(t, err, "configuration_error"); !strings.Contains(e.Message, "readable by other users") || strings.Contains(e.Message, testKey) {
		t.Fatalf("message %q", e.Message)
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("sk-not-a-gateway-key"), 0o600)
	_, err = NewClient("https://g.example.com", WithAPIKeyFile(junk))
	asRelayError(t, err, "configuration_error")
	_, err = NewClient("https://g.example.com", WithAPIKeyFile(filepath.Join(dir, "missing")))
	asRelayError(t, err, "configuration_error")
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte(testKey+"\n"), 0o600)
	if _, err := NewClient("https://g.example.com", WithAPIKeyFile(good)); err != nil {
		t.Fatal(err)
	}
	_, err = NewClient("https://g.example.com", WithAPIKeyFile(good), WithAPIKey(testKey))
	asRelayError(t, err, "configuration_error")
}

const jwks = `{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k"}]}`

// fakeGateway answers the identity probe and hands relay calls to h; it records what it received.
type fakeGateway struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
}

func newFake(t *testing.T, h http.HandlerFunc) (*httptest.Server, *fakeGateway) {
	f := &fakeGateway{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == IdentityProbePath {
			w.Write([]byte(jwks))
			return
		}
		b := make([]byte, r.ContentLength)
		if r.ContentLength > 0 {
			r.Body.Read(b)
		}
		f.mu.Lock()
		f.requests = append(f.requests, r)
		f.bodies = append(f.bodies, string(b))
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, f
}

func testClient(t *testing.T, url string, opts ...Option) *Client {
	c, err := NewClient(url, append([]Option{WithAPIKey(testKey), WithConfigDir(t.TempDir()), WithNameModel("off")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var chatParams = ChatCompletionParams{Model: "m", Messages: []ChatMessage{{Role: "user", Content: "Mail jane.doe@example.com"}}}

func TestRetriesHonourRetryAfterWithOneIdempotencyKey(t *testing.T) {
	var waits []time.Duration
	old := sleepHook
	sleepHook = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	defer func() { sleepHook = old }()
	n := 0
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			w.Header().Set("retry-after", "2")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
			return
		}
		if n == 2 {
			w.WriteHeader(503)
			return
		}
		w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
	})
	c := testClient(t, srv.URL, WithRetries(2))
	answer, err := c.Chat.Completions.Create(context.Background(), chatParams)
	if err != nil || answer.Text() != "ok" {
		t.Fatalf("%v %v", answer, err)
	}
	if len(f.requests) != 3 || waits[0] != 2*time.Second {
		t.Fatalf("%d requests, waits %v", len(f.requests), waits)
	}
	key := f.requests[0].Header.Get("idempotency-key")
	for i, r := range f.requests {
		if r.Header.Get("idempotency-key") != key || key == "" || f.bodies[i] != f.bodies[0] || r.Header.Get("x-service-attestation") == "" || !strings.HasPrefix(r.Header.Get("x-service-engine"), "relay-go/") {
			t.Fatalf("attempt %d differs: %v", i, r.Header)
		}
		if strings.Contains(f.bodies[i], "jane.doe") {
			t.Fatal("an original was sent")
		}
	}
	// Without retries left: the typed error with status, code, request id and Retry-After.
	n = 0
	c0 := testClient(t, srv.URL, WithRetries(0))
	_, err = c0.Chat.Completions.Create(context.Background(), chatParams)
	e := asRelayError(t, err, "rate_limited")
	if e.Status != 429 || e.RetryAfter != 2*time.Second || !e.Sent {
		t.Fatalf("%+v", e)
	}
	// A 400 is not retried.
	srv400, f400 := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", "req_1")
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"code":"egress_policy_violation","message":"no","details":{"path":"/x"}}}`))
	})
	_, err = testClient(t, srv400.URL).Chat.Completions.Create(context.Background(), chatParams)
	e = asRelayError(t, err, "egress_policy_violation")
	if e.RequestID != "req_1" || e.Details["path"] != "/x" || len(f400.requests) != 1 {
		t.Fatalf("%+v, %d requests", e, len(f400.requests))
	}
}

func TestNothingSentWithoutAGatewayIdentity(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != IdentityProbePath {
			hits++
		}
		w.Write([]byte(`{"hello":"not a gateway"}`))
	}))
	defer srv.Close()
	_, err := testClient(t, srv.URL).Chat.Completions.Create(context.Background(), chatParams)
	asRelayError(t, err, "gateway_identity_failed")
	if hits != 0 {
		t.Fatal("a relay call reached a server that is not a gateway")
	}
}

func TestInvalidBodyIsRefusedLocally(t *testing.T) {
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	_, err := testClient(t, srv.URL).Messages.Create(context.Background(), MessageParams{Model: "m", MaxTokens: 5})
	e := asRelayError(t, err, "invalid_request")
	if e.Sent || e.Status != 400 || len(f.requests) != 0 {
		t.Fatalf("%+v %d", e, len(f.requests))
	}
}

func sse(frames ...string) string { return strings.Join(frames, "") }

// streamWith answers every relay call with body (an SSE text).
func streamWith(t *testing.T, body string) (*Stream, *Client) {
	srv, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write([]byte(body))
	})
	c := testClient(t, srv.URL)
	s, err := c.Chat.Completions.NewStreaming(context.Background(), chatParams)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func chunk(text string, finish bool) string {
	fr := "null"
	if finish {
		fr = `"stop"`
	}
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", text, fr)
}

func drain(s *Stream) (string, error) {
	var b strings.Builder
	for s.Next() {
		b.WriteString(s.Current().Text)
	}
	return b.String(), s.Err()
}

func TestStreamErrors(t *testing.T) {
	// Malformed frame.
	s, _ := streamWith(t, sse(chunk("Hi ", false), "data: {not json\n\n"))
	_, err := drain(s)
	asRelayError(t, err, "stream_error")
	// Cut before [DONE], in the middle of an alias: an error, and the held-back alias prefix is never shown.
	s, _ = streamWith(t, sse(chunk("Hi <EMAIL_1_", false)))
	text, err := drain(s)
	asRelayError(t, err, "stream_error")
	if strings.Contains(text, "<EMAIL") {
		t.Fatalf("a cut alias reached the caller: %q", text)
	}
	// Torn frame at the end.
	s, _ = streamWith(t, sse(chunk("Hi", false), "data: [DONE]\n\n", "data: {\"x\""))
	_, err = drain(s)
	asRelayError(t, err, "stream_error")
	// An error event from the gateway.
	s, _ = streamWith(t, sse("event: error\ndata: {\"error\":{\"code\":\"upstream_error\",\"message\":\"boom\"}}\n\n"))
	_, err = drain(s)
	asRelayError(t, err, "upstream_error")
	// A complete stream without aliases, and a receipt trailer that is not JSON.
	s, _ = streamWith(t, sse(chunk("Hel", false), chunk("lo", true), "data: [DONE]\n\n", "event: receipt-v2\ndata: nope\n\n"))
	text, err = drain(s)
	asRelayError(t, err, "stream_error")
	if text != "Hello" {
		t.Fatalf("%q", text)
	}
	s, _ = streamWith(t, sse(chunk("Hel", false), chunk("lo", true), "data: [DONE]\n\n"))
	text, err = drain(s)
	if err != nil || text != "Hello" || s.Meta().Receipt != nil || s.Meta().ReceiptVerified != nil {
		t.Fatalf("%q %v %+v", text, err, s.Meta())
	}
}

func TestStreamRestoresAnAliasCutAcrossFrames(t *testing.T) {
	var alias string
	srv, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		i := strings.Index(alias, "_1_") + 3
		w.Write([]byte(sse(chunk("To "+alias[:i], false), chunk(alias[i:]+" now", true), "data: [DONE]\n\n")))
	})
	c := testClient(t, srv.URL)
	// Tokenise once to learn the alias the engine gives under an idempotency key (same key: same aliases).
	p, err := c.prepare("chat.completions", chatParams.body(true), "fixed-key")
	if err != nil {
		t.Fatal(err)
	}
	alias = p.aliases[0][0]
	s, err := c.Chat.Completions.NewStreaming(context.Background(), chatParams, CallOptions{IdempotencyKey: "fixed-key"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, err := drain(s)
	if err != nil || text != "To jane.doe@example.com now" {
		t.Fatalf("%q %v (alias %s)", text, err, alias)
	}
}

func TestWebhookDeduperForgetsTheOldest(t *testing.T) {
	d := NewWebhookDeduper(2)
	if !d.FirstTime("a") || !d.FirstTime("b") || d.FirstTime("a") || !d.FirstTime("c") || !d.FirstTime("a") || d.FirstTime("c") {
		t.Fatal("dedupe window wrong")
	}
}

func TestRESTNeedsItsCredential(t *testing.T) {
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"id":7}`)) })
	c := testClient(t, srv.URL)
	err := c.Do(context.Background(), "GET", "/api/v1/webhooks/endpoints", AuthPortal, nil, nil)
	if e := asRelayError(t, err, "configuration_error"); e.Sent || len(f.requests) != 0 {
		t.Fatalf("%+v", e)
	}
	c = testClient(t, srv.URL, WithPortalToken("spt_test"))
	ep, err := c.Webhooks.Endpoints.Create(context.Background(), "https://example.com/h", nil)
	if err != nil || ep.ID != "7" {
		t.Fatalf("%+v %v", ep, err)
	}
	r := f.requests[0]
	if r.Header.Get("authorization") != "Bearer spt_test" || r.Header.Get("idempotency-key") == "" || r.Header.Get("traceparent") == "" {
		t.Fatalf("headers %v", r.Header)
	}
}

func TestTheEgressPolicyRefusesLocallyAndAliasesIdentifiers(t *testing.T) {
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`))
	})
	c := testClient(t, srv.URL)
	ctx := context.Background()
	cases := []struct {
		call       func() error
		code, path string
		status     int
	}{
		{func() error {
			_, err := c.Chat.Completions.Create(ctx, ChatCompletionParams{Model: "m", Messages: chatParams.Messages, Extra: map[string]any{"x_invented": "jane.doe@example.com"}})
			return err
		}, "unsupported_field", "/x_invented", 400},
		{func() error {
			_, err := c.Chat.Completions.Create(ctx, ChatCompletionParams{Model: "m", Messages: []ChatMessage{{Role: "user", Content: []any{
				map[string]any{"type": "text", "text": "look"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}}}}}})
			return err
		}, "unsupported_content", "/messages/0/content/1", 415},
	}
	for i, tc := range cases {
		e := asRelayError(t, tc.call(), tc.code)
		if e.Status != tc.status || e.Details["path"] != tc.path || e.Sent {
			t.Errorf("case %d: %+v", i, e)
		}
	}
	if len(f.requests) != 0 {
		t.Fatalf("%d requests reached the gateway", len(f.requests))
	}
	// End-user identifiers leave as device-stable USER_ aliases, the same on every call.
	p := ChatCompletionParams{Model: "m", Messages: []ChatMessage{{Role: "user", Content: "hi", Name: "Jane Doe"}},
		Extra: map[string]any{"user": "jane.doe@example.com", "metadata": map[string]any{"k": "jane.doe@example.com"}, "temperature": 0.2}}
	for i := 0; i < 2; i++ {
		if _, err := c.Chat.Completions.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.bodies) != 2 || f.bodies[0] != f.bodies[1] || strings.Contains(f.bodies[0], "jane") || strings.Contains(f.bodies[0], "Jane") || !strings.Contains(f.bodies[0], `"user":"USER_`) {
		t.Fatalf("sent %v", f.bodies)
	}
}

func TestStreamedToolArgumentsAreRestoredAcrossChunks(t *testing.T) {
	var alias string
	srv, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		i := strings.Index(alias, "_1_") + 3
		args1, _ := json.Marshal(`{"to":"` + alias[:i])
		args2, _ := json.Marshal(alias[i:] + `"}`)
		frame := func(args []byte, finish string) string {
			return fmt.Sprintf("data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":%s}}]},\"finish_reason\":%s}]}\n\n", args, finish)
		}
		w.Write([]byte(frame(args1, "null") + frame(args2, "null") + "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	})
	c := testClient(t, srv.URL)
	params := ChatCompletionParams{Model: "m", Messages: []ChatMessage{{Role: "user", Content: "Mail jane.doe@example.com"}}}
	p, err := c.prepare("chat.completions", params.body(true), "k2")
	if err != nil || len(p.aliases) == 0 {
		t.Fatalf("%v %v", p, err)
	}
	alias = p.aliases[0][0]
	s, err := c.Chat.Completions.NewStreaming(context.Background(), params, CallOptions{IdempotencyKey: "k2"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	args := ""
	for s.Next() {
		var chunk struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(s.Current().Data, &chunk)
		for _, ch := range chunk.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
			}
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	var parsed map[string]string
	if err := json.Unmarshal([]byte(args), &parsed); err != nil || parsed["to"] != p.aliases[0][1] {
		t.Fatalf("arguments %q (%v), want to=%q", args, err, p.aliases[0][1])
	}
}

func TestEscapedMapEscapesOriginalsForJSONText(t *testing.T) {
	var m [][2]string
	if err := json.Unmarshal([]byte(escapedMap([][2]string{{"<PERSON_1_abcd>", `Jo "Q" <b>\`}})), &m); err != nil {
		t.Fatal(err)
	}
	// What replaces the alias inside a JSON string: the original, escaped as JSON string content.
	if m[0][1] != `Jo \"Q\" <b>\\` {
		t.Fatalf("%s", m[0][1])
	}
}

// A non-streamed answer: a content string takes the original as it is, and a tool call's "arguments" (JSON text
// inside a JSON string) takes it so that the arguments still parse and hold the original, even when the original
// has a quote or a backslash; the answer's key order is kept.
func TestNonStreamedAnswerRestoresOriginalsInContentAndToolArguments(t *testing.T) {
	original := `Jo "Q" O'Neil \ <b>`
	mapJSON := string(marshalNoEscape([][2]string{{"<PERSON_1_abcd>", original}}))
	answer := `{"z":1,"choices":[{"message":{"content":"Hi <PERSON_1_abcd>!","tool_calls":[{"function":{"name":"mail","arguments":"{\"to\":\"<PERSON_1_abcd>\",\"n\":2}"}}]}}],"a":[true,null,1.5e3]}`
	restored, err := detokeniseJSON([]byte(answer), mapJSON)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct{ Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(restored, &got); err != nil {
		t.Fatalf("%v: %s", err, restored)
	}
	if got.Choices[0].Message.Content != "Hi "+original+"!" {
		t.Fatalf("content %q", got.Choices[0].Message.Content)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(got.Choices[0].Message.ToolCalls[0].Function.Arguments), &args); err != nil || args["to"] != original {
		t.Fatalf("arguments %q (%v)", got.Choices[0].Message.ToolCalls[0].Function.Arguments, err)
	}
	if !strings.HasPrefix(string(restored), `{"z":1,"choices":`) || !strings.HasSuffix(string(restored), `"a":[true,null,1.5e3]}`) {
		t.Fatalf("order or numbers changed: %s", restored)
	}
	for _, bad := range []string{`{"a":`, `{"a":1}x`, `[1,2`} {
		if _, err := detokeniseJSON([]byte(bad), mapJSON); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
