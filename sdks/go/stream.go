package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// StreamEvent is one event of a streamed answer with the originals restored: an OpenAI chat.completion.chunk
// (Event ""), an Anthropic event or an OpenAI Responses event (Event is its name). Text is the restored text it
// adds (a chat choice's delta.content, a text_delta, a response.output_text.delta), Data the whole event.
type StreamEvent struct {
	Event string
	Data  json.RawMessage
	Text  string
}

// Stream is a streamed answer. Aliases cut across chunks are restored whole as they arrive (each text field has
// its own streaming detokeniser in the engine). After Next answers false, Err says why (nil at a complete end)
// and Meta holds the receipt-v2 trailer and its verdict. Close it when done.
type Stream struct {
	c       *Client
	ctx     context.Context
	route   string
	res     *http.Response
	rd      *bufio.Reader
	mapJSON string
	escaped string
	fields  map[string]*engine.Detokeniser
	order   []string
	queue   []StreamEvent
	cur     StreamEvent
	err     error
	done    bool
	ended   bool
	lastID  any
	model   any
	meta    Meta
	// shift: how many synthetic events were inserted in a Responses stream (later sequence numbers move by it).
	shift int
}

func (c *Client) relayStream(ctx context.Context, route string, body map[string]any, o CallOptions) (*Stream, error) {
	p, res, err := c.relay(ctx, route, body, o, true)
	if err != nil {
		return nil, err
	}
	s := &Stream{c: c, ctx: ctx, route: route, res: res, rd: bufio.NewReaderSize(res.Body, 64<<10), mapJSON: p.mapJSON, escaped: escapedMap(p.aliases), fields: map[string]*engine.Detokeniser{}}
	s.meta.RequestID = res.Header.Get("x-request-id")
	s.meta.TokenisedRequest = p.body
	s.meta.Attestation = p.headers["x-service-attestation"]
	return s, nil
}

// Next advances to the next event; false at the end or on an error (see Err).
func (s *Stream) Next() bool {
	for len(s.queue) == 0 {
		if s.done {
			return false
		}
		if err := s.readFrame(); err != nil {
			s.fail(err)
			return false
		}
	}
	s.cur, s.queue = s.queue[0], s.queue[1:]
	return true
}

// Current is the event Next moved to.
func (s *Stream) Current() StreamEvent { return s.cur }

// Err is the error that ended the stream (an *Error with Code stream_error for a cut or malformed stream).
func (s *Stream) Err() error { return s.err }

// Meta is the stream's metadata; Receipt and its verdict are set once the stream ended completely.
func (s *Stream) Meta() Meta { return s.meta }

// Close stops the stream and releases its detokenisers.
func (s *Stream) Close() error {
	s.done = true
	for _, d := range s.fields {
		d.Close()
	}
	s.fields = map[string]*engine.Detokeniser{}
	return s.res.Body.Close()
}

func (s *Stream) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.Close()
}

func (s *Stream) streamError(format string, args ...any) *Error {
	return &Error{Code: "stream_error", Status: s.res.StatusCode, RequestID: s.meta.RequestID, Sent: true, Message: fmt.Sprintf(format, args...)}
}

// readFrame reads one SSE frame (up to a blank line) and queues its events.
func (s *Stream) readFrame() error {
	var name string
	var data []string
	seen := false
	for {
		line, err := s.rd.ReadString('\n')
		if err == io.EOF && line == "" {
			if seen {
				return s.streamError("the stream ended in the middle of a frame")
			}
			return s.end()
		}
		if err != nil && err != io.EOF {
			if s.ctx.Err() != nil {
				return &Error{Code: "canceled", Message: s.ctx.Err().Error(), Sent: true}
			}
			return s.streamError("the stream broke: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if err == io.EOF {
				return s.streamError("the stream ended in the middle of a frame")
			}
			if !seen {
				continue
			}
			break
		}
		seen = true
		switch {
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			v := line[5:]
			data = append(data, strings.TrimPrefix(v, " "))
		}
		if err == io.EOF {
			return s.streamError("the stream ended in the middle of a frame")
		}
	}
	if len(data) == 0 {
		return nil
	}
	return s.handle(name, strings.Join(data, "\n"))
}

// end: the body ended. Complete only after [DONE] (chat), message_stop (messages) or a terminal response.* event
// (responses); then the receipt is verified.
func (s *Stream) end() error {
	s.done = true
	if !s.ended {
		return s.streamError("the stream ended before its end marker (the upstream cut it); the answer is incomplete")
	}
	if s.route == "chat.completions" {
		if err := s.releaseAllChat(); err != nil {
			return err
		}
	}
	if s.route == "responses" {
		if err := s.releaseAllResponses(nil); err != nil {
			return err
		}
	}
	s.meta.ReceiptVerified, s.meta.ReceiptVerification = s.c.verifyMeta(s.ctx, s.meta.Receipt, "")
	return nil
}

func (s *Stream) field(key string) (*engine.Detokeniser, error) {
	if d, ok := s.fields[key]; ok {
		return d, nil
	}
	m := s.mapJSON
	if strings.HasPrefix(key, "t") || strings.HasPrefix(key, "j") || (strings.HasPrefix(key, "r|") && strings.Contains(key, "arguments")) {
		m = s.escaped // tool arguments and partial_json stream JSON text: originals go in JSON-escaped
	}
	d, err := engine.NewDetokeniser(m)
	if err != nil {
		return nil, err
	}
	s.fields[key] = d
	s.order = append(s.order, key)
	return d, nil
}

func (s *Stream) release(key string) (string, error) {
	d, ok := s.fields[key]
	if !ok {
		return "", nil
	}
	delete(s.fields, key)
	defer d.Close()
	return d.Finish()
}

func (s *Stream) emit(name string, v any, text string) {
	s.queue = append(s.queue, StreamEvent{Event: name, Data: marshalNoEscape(v), Text: text})
}

func (s *Stream) handle(name, text string) error {
	if name == "receipt-v2" {
		var r map[string]any
		if json.Unmarshal([]byte(text), &r) != nil {
			return s.streamError("the receipt-v2 trailer is not JSON")
		}
		s.meta.Receipt = r
		return nil
	}
	if text == "[DONE]" {
		s.ended = true
		return s.releaseAllChat()
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return s.streamError("the gateway sent a stream frame that is not a JSON object")
	}
	if name == "error" || v["type"] == "error" {
		e := &Error{Code: "stream_error", Status: s.res.StatusCode, RequestID: s.meta.RequestID, Sent: true, Body: []byte(text)}
		if inner, ok := v["error"].(map[string]any); ok {
			e.Message, _ = inner["message"].(string)
			if c, ok := inner["code"].(string); ok {
				e.Code = c
			} else if t, ok := inner["type"].(string); ok {
				e.Code = t
			}
		}
		return e
	}
	switch s.route {
	case "chat.completions":
		return s.chatFrame(v)
	case "responses":
		return s.responsesFrame(name, v)
	}
	return s.messagesFrame(name, v)
}

func (s *Stream) chatFrame(chunk map[string]any) error {
	if id, ok := chunk["id"]; ok {
		s.lastID = id
	}
	if m, ok := chunk["model"]; ok {
		s.model = m
	}
	added := ""
	choices, _ := chunk["choices"].([]any)
	for _, raw := range choices {
		choice, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		i := fmt.Sprint(choice["index"])
		delta, _ := choice["delta"].(map[string]any)
		if delta != nil {
			if content, ok := delta["content"].(string); ok {
				d, err := s.field("c" + i)
				if err != nil {
					return err
				}
				out, err := d.Push(content)
				if err != nil {
					return err
				}
				delta["content"] = out
				added += out
			}
			calls, _ := delta["tool_calls"].([]any)
			for _, rc := range calls {
				call, _ := rc.(map[string]any)
				fn, _ := call["function"].(map[string]any)
				if args, ok := fn["arguments"].(string); ok {
					d, err := s.field("t" + i + "." + fmt.Sprint(call["index"]))
					if err != nil {
						return err
					}
					if fn["arguments"], err = d.Push(args); err != nil {
						return err
					}
				}
			}
		}
		if fr, ok := choice["finish_reason"]; ok && fr != nil {
			for _, key := range append([]string{}, s.order...) {
				if _, open := s.fields[key]; !open || !strings.HasPrefix(key, "t"+i+".") {
					continue
				}
				args, err := s.release(key)
				if err != nil {
					return err
				}
				if args != "" {
					if delta == nil {
						delta = map[string]any{}
						choice["delta"] = delta
					}
					calls, _ := delta["tool_calls"].([]any)
					var idx int
					fmt.Sscan(key[strings.Index(key, ".")+1:], &idx)
					delta["tool_calls"] = append(calls, map[string]any{"index": idx, "function": map[string]any{"arguments": args}})
				}
			}
			rest, err := s.release("c" + i)
			if err != nil {
				return err
			}
			if rest != "" {
				if delta == nil {
					delta = map[string]any{}
					choice["delta"] = delta
				}
				before, _ := delta["content"].(string)
				delta["content"] = before + rest
				added += rest
			}
		}
	}
	s.emit("", chunk, added)
	return nil
}

func (s *Stream) releaseAllChat() error {
	var choices []any
	text := ""
	for _, key := range s.order {
		if _, ok := s.fields[key]; !ok || !strings.HasPrefix(key, "c") {
			continue
		}
		rest, err := s.release(key)
		if err != nil {
			return err
		}
		if rest == "" {
			continue
		}
		var idx int
		fmt.Sscan(key[1:], &idx)
		choices = append(choices, map[string]any{"index": idx, "delta": map[string]any{"content": rest}, "finish_reason": nil})
		text += rest
	}
	if len(choices) > 0 {
		s.emit("", map[string]any{"id": s.lastID, "object": "chat.completion.chunk", "model": s.model, "choices": choices}, text)
	}
	return nil
}

func (s *Stream) messagesFrame(name string, v map[string]any) error {
	index := v["index"]
	key := "b" + fmt.Sprint(index)
	switch v["type"] {
	case "content_block_delta":
		if delta, ok := v["delta"].(map[string]any); ok && delta["type"] == "text_delta" {
			if t, ok := delta["text"].(string); ok {
				d, err := s.field(key)
				if err != nil {
					return err
				}
				out, err := d.Push(t)
				if err != nil {
					return err
				}
				delta["text"] = out
				s.emit(name, v, out)
				return nil
			}
		}
		if delta, ok := v["delta"].(map[string]any); ok && delta["type"] == "input_json_delta" {
			if pj, ok := delta["partial_json"].(string); ok {
				d, err := s.field("j" + fmt.Sprint(index))
				if err != nil {
					return err
				}
				if delta["partial_json"], err = d.Push(pj); err != nil {
					return err
				}
			}
		}
	case "content_block_stop":
		rest, err := s.release(key)
		if err != nil {
			return err
		}
		if rest != "" {
			s.emit("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": rest}}, rest)
		}
		partial, err := s.release("j" + fmt.Sprint(index))
		if err != nil {
			return err
		}
		if partial != "" {
			s.emit("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": partial}}, "")
		}
	case "message_stop":
		s.ended = true
	}
	s.emit(name, v, "")
	return nil
}
