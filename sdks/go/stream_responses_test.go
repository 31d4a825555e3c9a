package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

var responseParams = ResponseParams{Model: "m", Input: "Mail jane.doe@example.com"}

func responsesEvent(seq int, v map[string]any) string {
	v["sequence_number"] = seq
	b, _ := json.Marshal(v)
	return fmt.Sprintf("event: %s\ndata: %s\n\n", v["type"], b)
}

// responsesStream serves the SSE text build(alias) answers, where alias is the one the engine gives the request's
// email under a fixed Idempotency-Key.
func responsesStream(t *testing.T, build func(alias string) string) *Stream {
	var alias string
	srv, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write([]byte(build(alias)))
	})
	c := testClient(t, srv.URL)
	body := map[string]any{"model": responseParams.Model, "input": responseParams.Input, "stream": true}
	p, err := c.prepare("responses", body, "fixed-key")
	if err != nil {
		t.Fatal(err)
	}
	alias = p.aliases[0][0]
	s, err := c.Responses.NewStreaming(context.Background(), responseParams, CallOptions{IdempotencyKey: "fixed-key"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// An alias cut across output_text.delta events is shown whole; the held-back part is released as a synthetic delta
// before the .done event, whose sequence number (and every later one) moves by one; .done, output items and
// response.completed carry whole values with the originals restored (JSON-escaped inside function arguments).
func TestResponsesStreamRestoresAliasesAcrossEvents(t *testing.T) {
	s := responsesStream(t, func(alias string) string {
		cut := strings.Index(alias, "_1_") + 3
		delta := func(seq int, text string) string {
			return responsesEvent(seq, map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text})
		}
		return sse(
			responsesEvent(0, map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress"}}),
			delta(1, "To "+alias[:cut]),
			delta(2, alias[cut:]+" and "+alias[:4]),
			// The provider ends the field with a cut alias prefix still held back: it is released as typed.
			responsesEvent(3, map[string]any{"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "To " + alias + " and " + alias[:4]}),
			responsesEvent(4, map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": `{"to":"` + alias[:cut]}),
			responsesEvent(5, map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": alias[cut:] + `"}`}),
			responsesEvent(6, map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "status": "completed",
				"output": []any{map[string]any{"type": "function_call", "arguments": `{"to":"` + alias + `"}`}, map[string]any{"type": "message", "content": []any{map[string]any{"type": "output_text", "text": "To " + alias}}}}}}),
			"event: receipt-v2\ndata: {\"v\":2}\n\n",
		)
	})
	var text strings.Builder
	var types []string
	var seqs []float64
	var completed map[string]any
	args := ""
	for s.Next() {
		ev := s.Current()
		var v map[string]any
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ev.Data), "<EMAIL") {
			t.Errorf("an alias reached the caller: %s", ev.Data)
		}
		text.WriteString(ev.Text)
		types = append(types, v["type"].(string))
		seqs = append(seqs, v["sequence_number"].(float64))
		if v["type"] == "response.function_call_arguments.delta" {
			args += v["delta"].(string)
		}
		if v["type"] == "response.completed" {
			completed = v
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
		"response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.completed"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v", types)
	}
	if fmt.Sprint(seqs) != "[0 1 2 3 4 5 6 7]" {
		t.Fatalf("sequence numbers %v", seqs)
	}
	if text.String() != "To jane.doe@example.com and <EMA" {
		t.Fatalf("text %q", text.String())
	}
	if args != `{"to":"jane.doe@example.com"}` {
		t.Fatalf("arguments %q", args)
	}
	out, _ := json.Marshal(completed)
	if !strings.Contains(string(out), `"arguments":"{\"to\":\"jane.doe@example.com\"}"`) || !strings.Contains(string(out), `"text":"To jane.doe@example.com"`) {
		t.Fatalf("completed %s", out)
	}
	if s.Meta().Receipt == nil || s.Meta().Receipt["v"] != float64(2) {
		t.Fatalf("receipt %+v", s.Meta())
	}
}

// A Responses stream that ends before a terminal event is a stream_error, and a cut alias prefix is never shown.
func TestResponsesStreamCutBeforeItsEndIsAnError(t *testing.T) {
	s := responsesStream(t, func(alias string) string {
		return responsesEvent(0, map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "To " + alias[:6]})
	})
	text, err := drain(s)
	asRelayError(t, err, "stream_error")
	if strings.Contains(text, "<") {
		t.Fatalf("a cut alias reached the caller: %q", text)
	}
}
