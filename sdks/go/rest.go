package relay

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Auth says which credential a REST call carries.
type Auth int

const (
	// AuthKey sends the gateway key (svc_...).
	AuthKey Auth = iota
	// AuthPortal sends the portal token (spt_..., WithPortalToken): key management, billing, webhooks.
	AuthPortal
	// AuthNone sends no credential (public routes such as POST /api/v1/self-service/key).
	AuthNone
)

// WithPortalToken gives the portal token (spt_...) that portal-token routes need.
func WithPortalToken(token string) Option {
	return func(s *settings) error { s.portalToken = token; return nil }
}

// Do calls any route of the gateway's REST API (docs/openapi.json) and decodes its JSON answer into out (nil:
// ignore). The typed services (client.Keys, client.Receipts, client.Webhooks, client.Billing, client.Self,
// client.CreateSelfServiceKey) are built on it; Do reaches the routes they do not name. A credential goes only to a URL
// that passed the identity probe; writes carry an Idempotency-Key (opts' own, else a fresh one) that every retry
// reuses; errors are *Error.
func (c *Client) Do(ctx context.Context, method, path string, auth Auth, body any, out any, opts ...CallOptions) error {
	method = strings.ToUpper(method)
	o := first(opts)
	tp := o.Traceparent
	if tp == "" {
		tp = NewTraceparent()
	}
	h := map[string]string{"accept": "application/json", "traceparent": tp}
	switch auth {
	case AuthKey:
		if c.apiKey == "" {
			return configError("this call needs a gateway key: give WithAPIKey or WithAPIKeyFile")
		}
		h["authorization"] = "Bearer " + c.apiKey
	case AuthPortal:
		if c.s.portalToken == "" {
			return configError("this call needs a portal token: give WithPortalToken (spt_...)")
		}
		h["authorization"] = "Bearer " + c.s.portalToken
	}
	if auth != AuthNone {
		if _, err := c.ready(ctx); err != nil {
			return err
		}
	}
	var raw []byte
	if body != nil {
		raw = marshalNoEscape(body)
		h["content-type"] = "application/json"
	}
	if method != "GET" && method != "HEAD" {
		h["idempotency-key"] = o.IdempotencyKey
		if o.IdempotencyKey == "" {
			h["idempotency-key"] = newUUID()
		}
	}
	res, err := c.send(ctx, method, path, h, raw, false)
	if err != nil {
		return err
	}
	answer, _ := readAll(res.Body, 64<<20)
	if out == nil || len(answer) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return &Error{Code: "invalid_answer", Status: res.StatusCode, RequestID: res.Header.Get("x-request-id"), Message: "the answer is not JSON: " + err.Error(), Sent: true}
	}
	return nil
}

func pathEscape(s string) string { return url.PathEscape(s) }

// query builds "?k=v&..." from the pairs whose value is set (empty strings and zero ints are left out).
func query(pairs ...any) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		k := pairs[i].(string)
		switch x := pairs[i+1].(type) {
		case string:
			if x != "" {
				v.Set(k, x)
			}
		case int:
			if x != 0 {
				v.Set(k, strconv.Itoa(x))
			}
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// call is Do decoding into a fresh T: the answer, or nil and the *Error.
func call[T any](ctx context.Context, c *Client, method, path string, auth Auth, body any, opts []CallOptions) (*T, error) {
	var out T
	if err := c.Do(ctx, method, path, auth, body, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// WebhookDeduper remembers the last N event ids (X-Service-Webhook-Id / event_id) so a redelivered event is
// handled once. Safe for concurrent use.
type WebhookDeduper struct {
	mu    sync.Mutex
	max   int
	seen  map[string]struct{}
	order []string
}

// NewWebhookDeduper remembers up to max ids (default 10000 when max <= 0).
func NewWebhookDeduper(max int) *WebhookDeduper {
	if max <= 0 {
		max = 10000
	}
	return &WebhookDeduper{max: max, seen: map[string]struct{}{}}
}

// FirstTime records id and reports whether it was new.
func (d *WebhookDeduper) FirstTime(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[id]; ok {
		return false
	}
	d.seen[id] = struct{}{}
	d.order = append(d.order, id)
	if len(d.order) > d.max {
		delete(d.seen, d.order[0])
		d.order = d.order[1:]
	}
	return true
}

// ID is a resource id of the REST API: the gateway answers some as numbers, some as strings.
type ID string

// UnmarshalJSON accepts a JSON number or string.
func (i *ID) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*i = ID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*i = ID(n.String())
	return nil
}
