package relay

import (
	"context"
	"encoding/json"
	"net/url"
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

// Do calls any route of the gateway's REST API (docs/openapi) and decodes its JSON answer into out (nil: ignore).
// It is the low-level path of the REST capability set: typed wrappers exist for webhook endpoints only so far.
// A credential goes only to a URL that passed the identity probe; writes carry an Idempotency-Key (reused by the
// retries); errors are *Error.
func (c *Client) Do(ctx context.Context, method, path string, auth Auth, body any, out any) error {
	method = strings.ToUpper(method)
	h := map[string]string{"accept": "application/json", "traceparent": NewTraceparent()}
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
		h["idempotency-key"] = newUUID()
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

// WebhookEndpoint is a webhook endpoint; Secret is present only when it was created or rotated.
type WebhookEndpoint struct {
	ID     ID       `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret,omitempty"`
}

// WebhooksService is client.Webhooks (portal token).
type WebhooksService struct{ c *Client }

// CreateEndpoint registers url for events (nil: the gateway's default set).
func (s *WebhooksService) CreateEndpoint(ctx context.Context, endpointURL string, events []string) (*WebhookEndpoint, error) {
	body := map[string]any{"url": endpointURL}
	if events != nil {
		body["events"] = events
	}
	var out WebhookEndpoint
	if err := s.c.Do(ctx, "POST", "/api/v1/webhooks/endpoints", AuthPortal, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TestEndpoint asks the gateway to deliver a webhook.test event to the endpoint.
func (s *WebhooksService) TestEndpoint(ctx context.Context, id ID) error {
	return s.c.Do(ctx, "POST", "/api/v1/webhooks/endpoints/"+pathEscape(string(id))+"/test", AuthPortal, map[string]any{}, nil)
}

func pathEscape(s string) string { return url.PathEscape(s) }

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
