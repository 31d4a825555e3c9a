package relay

import (
	"context"
	"encoding/json"
)

// WebhookEndpoint is a webhook endpoint; Secret (whsec_...) is present only when it was created or rotated.
type WebhookEndpoint struct {
	ID           ID       `json:"id"`
	URL          string   `json:"url"`
	Events       []string `json:"events"`
	Status       string   `json:"status"` // active, paused
	PausedReason *string  `json:"paused_reason"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
	Secret       string   `json:"secret,omitempty"`
}

// WebhookEndpointUpdate changes an endpoint; an empty field is unchanged.
type WebhookEndpointUpdate struct {
	URL    string   `json:"url,omitempty"`
	Events []string `json:"events,omitempty"`
}

// WebhookDelivery is one event queued for one endpoint, with its delivery state.
type WebhookDelivery struct {
	ID            ID      `json:"id"`
	EndpointID    ID      `json:"endpoint_id"`
	Event         string  `json:"event"`
	EventID       string  `json:"event_id"`
	Status        string  `json:"status"` // pending, retrying, delivered, dead
	AttemptCount  int     `json:"attempt_count"`
	LastHTTPCode  *int    `json:"last_http_code"`
	LastError     *string `json:"last_error"`
	NextAttemptAt *string `json:"next_attempt_at"`
	ReplayOf      *ID     `json:"replay_of"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
	CompletedAt   *string `json:"completed_at"`
	// Payload and Attempts are present on Deliveries.Get only.
	Payload  json.RawMessage  `json:"payload,omitempty"`
	Attempts []map[string]any `json:"attempts,omitempty"`
}

// WebhookDeliveryListParams filters client.Webhooks.Deliveries.List (Before: a delivery id, for paging).
type WebhookDeliveryListParams struct {
	Limit      int
	Before     string
	EndpointID string
	Status     string
}

// WebhooksService is client.Webhooks (portal token with webhooks.manage / webhooks.read).
type WebhooksService struct {
	Endpoints  *WebhookEndpointsService
	Deliveries *WebhookDeliveriesService
}

// WebhookEndpointsService is client.Webhooks.Endpoints.
type WebhookEndpointsService struct{ c *Client }

// Create registers url for events (nil: the gateway's default set). The answer carries the signing secret.
func (s *WebhookEndpointsService) Create(ctx context.Context, endpointURL string, events []string, opts ...CallOptions) (*WebhookEndpoint, error) {
	body := map[string]any{"url": endpointURL}
	if events != nil {
		body["events"] = events
	}
	return call[WebhookEndpoint](ctx, s.c, "POST", "/api/v1/webhooks/endpoints", AuthPortal, body, opts)
}

// List lists the organisation's endpoints (without secrets).
func (s *WebhookEndpointsService) List(ctx context.Context, opts ...CallOptions) ([]WebhookEndpoint, error) {
	out, err := call[struct {
		Endpoints []WebhookEndpoint `json:"endpoints"`
	}](ctx, s.c, "GET", "/api/v1/webhooks/endpoints", AuthPortal, nil, opts)
	if err != nil {
		return nil, err
	}
	return out.Endpoints, nil
}

// Get answers one endpoint.
func (s *WebhookEndpointsService) Get(ctx context.Context, id ID, opts ...CallOptions) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, s.c, "GET", endpointPath(id, ""), AuthPortal, nil, opts)
}

// Update changes an endpoint's URL or events.
func (s *WebhookEndpointsService) Update(ctx context.Context, id ID, p WebhookEndpointUpdate, opts ...CallOptions) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, s.c, "PATCH", endpointPath(id, ""), AuthPortal, p, opts)
}

// Delete removes an endpoint.
func (s *WebhookEndpointsService) Delete(ctx context.Context, id ID, opts ...CallOptions) error {
	return s.c.Do(ctx, "DELETE", endpointPath(id, ""), AuthPortal, nil, nil, opts...)
}

// RotateSecret replaces the endpoint's signing secret; the answer carries the new one.
func (s *WebhookEndpointsService) RotateSecret(ctx context.Context, id ID, opts ...CallOptions) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, s.c, "POST", endpointPath(id, "/rotate"), AuthPortal, map[string]any{}, opts)
}

// Resume re-activates an endpoint the gateway paused after repeated failures.
func (s *WebhookEndpointsService) Resume(ctx context.Context, id ID, opts ...CallOptions) (*WebhookEndpoint, error) {
	return call[WebhookEndpoint](ctx, s.c, "POST", endpointPath(id, "/resume"), AuthPortal, map[string]any{}, opts)
}

// Test queues a webhook.test event for the endpoint and answers its delivery.
func (s *WebhookEndpointsService) Test(ctx context.Context, id ID, opts ...CallOptions) (*WebhookDelivery, error) {
	return call[WebhookDelivery](ctx, s.c, "POST", endpointPath(id, "/test"), AuthPortal, map[string]any{}, opts)
}

func endpointPath(id ID, tail string) string {
	return "/api/v1/webhooks/endpoints/" + pathEscape(string(id)) + tail
}

// WebhookDeliveriesService is client.Webhooks.Deliveries.
type WebhookDeliveriesService struct{ c *Client }

// List lists deliveries, newest first.
func (s *WebhookDeliveriesService) List(ctx context.Context, p WebhookDeliveryListParams, opts ...CallOptions) ([]WebhookDelivery, error) {
	q := query("limit", p.Limit, "before", p.Before, "endpoint_id", p.EndpointID, "status", p.Status)
	out, err := call[struct {
		Deliveries []WebhookDelivery `json:"deliveries"`
	}](ctx, s.c, "GET", "/api/v1/webhooks/deliveries"+q, AuthPortal, nil, opts)
	if err != nil {
		return nil, err
	}
	return out.Deliveries, nil
}

// Get answers one delivery with its payload and attempts.
func (s *WebhookDeliveriesService) Get(ctx context.Context, id ID, opts ...CallOptions) (*WebhookDelivery, error) {
	return call[WebhookDelivery](ctx, s.c, "GET", "/api/v1/webhooks/deliveries/"+pathEscape(string(id)), AuthPortal, nil, opts)
}

// Replay copies the delivery's event into a new delivery for the same endpoint (ReplayOf is id, EventID is
// replay-<uuid>: a receiver's dedupe does not drop it).
func (s *WebhookDeliveriesService) Replay(ctx context.Context, id ID, opts ...CallOptions) (*WebhookDelivery, error) {
	return call[WebhookDelivery](ctx, s.c, "POST", "/api/v1/webhooks/deliveries/"+pathEscape(string(id))+"/replay", AuthPortal, map[string]any{}, opts)
}
