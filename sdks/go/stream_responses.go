package relay

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// The Responses stream (POST /api/v1/responses with stream: true), as sdks/python's sse.py and the TypeScript
// sseDetokeniser: every "*.delta" event's delta has its own streaming detokeniser (keyed by the event type and
// the item, output, content and summary indexes), so an alias cut across events is held back and shown whole;
// held-back text is released as a synthetic delta event just before the field's ".done" event (or before the
// terminal event when a provider left a field open), and the sequence numbers after it shift by one. Every other
// event (".done", output items, response.completed) carries whole values: all their strings are restored.

var responsesTerminal = map[string]bool{"response.completed": true, "response.incomplete": true, "response.failed": true}

func responsesKey(deltaType string, v map[string]any) string {
	part := func(k string) string {
		switch x := v[k].(type) {
		case nil:
			return ""
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		default:
			b, _ := json.Marshal(x)
			return string(b)
		}
	}
	return strings.Join([]string{"r", deltaType, part("item_id"), part("output_index"), part("content_index"), part("summary_index")}, "|")
}

func (s *Stream) renumbered(v map[string]any) map[string]any {
	if n, ok := v["sequence_number"].(float64); ok {
		v["sequence_number"] = n + float64(s.shift)
	}
	return v
}

// responsesRelease emits the held-back text of one field as a delta event of its own, numbered before next.
func (s *Stream) responsesRelease(key string, next any) error {
	rest, err := s.release(key)
	if err != nil || rest == "" {
		return err
	}
	p := strings.Split(key, "|")
	ev := map[string]any{"type": p[1]}
	n, numbered := next.(float64)
	if numbered {
		ev["sequence_number"] = n + float64(s.shift)
		s.shift++
	}
	if p[2] != "" {
		ev["item_id"] = p[2]
	}
	for i, name := range []string{"output_index", "content_index", "summary_index"} {
		if p[3+i] != "" {
			idx, _ := strconv.Atoi(p[3+i])
			ev[name] = idx
		}
	}
	ev["delta"] = rest
	text := ""
	if p[1] == "response.output_text.delta" {
		text = rest
	}
	s.emit(p[1], ev, text)
	return nil
}

func (s *Stream) responsesFrame(name string, v map[string]any) error {
	kind, _ := v["type"].(string)
	if kind == "" {
		kind = name
	}
	if delta, ok := v["delta"].(string); ok && strings.HasSuffix(kind, ".delta") {
		d, err := s.field(responsesKey(kind, v))
		if err != nil {
			return err
		}
		out, err := d.Push(delta)
		if err != nil {
			return err
		}
		v = s.renumbered(v)
		v["delta"] = out
		text := ""
		if kind == "response.output_text.delta" {
			text = out
		}
		s.emit(name, v, text)
		return nil
	}
	if strings.HasSuffix(kind, ".done") {
		if err := s.responsesRelease(responsesKey(strings.TrimSuffix(kind, ".done")+".delta", v), v["sequence_number"]); err != nil {
			return err
		}
	}
	if responsesTerminal[kind] {
		// Whatever a provider left open without its .done event is released before the end.
		if err := s.releaseAllResponses(v["sequence_number"]); err != nil {
			return err
		}
		s.ended = true
	}
	restored, err := s.detokeniseDeep(s.renumbered(v), "")
	if err != nil {
		return err
	}
	s.emit(name, restored, "")
	return nil
}

func (s *Stream) releaseAllResponses(next any) error {
	for _, key := range append([]string{}, s.order...) {
		if _, open := s.fields[key]; !open || !strings.HasPrefix(key, "r|") {
			continue
		}
		if err := s.responsesRelease(key, next); err != nil {
			return err
		}
	}
	return nil
}

// detokeniseDeep restores every string of a whole value; an "arguments" value is JSON text, so its originals go
// in JSON-escaped.
func (s *Stream) detokeniseDeep(v any, key string) (any, error) {
	switch x := v.(type) {
	case string:
		m := s.mapJSON
		if key == "arguments" {
			m = s.escaped
		}
		return engine.Detokenise(x, m)
	case []any:
		for i := range x {
			r, err := s.detokeniseDeep(x[i], "")
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
		return x, nil
	case map[string]any:
		for k := range x {
			r, err := s.detokeniseDeep(x[k], k)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
		return x, nil
	}
	return v, nil
}
