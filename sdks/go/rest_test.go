package relay

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// Each typed REST method reaches its route with its method, query, credential and body (docs/openapi.json), and
// decodes the answer into its type.
func TestRESTMethodsReachTheirRoutesWithTheirCredential(t *testing.T) {
	answer := `{}`
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(answer)) })
	c := testClient(t, srv.URL, WithPortalToken("spt_portal"))
	ctx := context.Background()
	name := "ci"
	days := 30
	const portal, key, none = "Bearer spt_portal", "Bearer " + testKey, ""
	cases := []struct {
		call                       func() error
		method, target, auth, body string
	}{
		{func() error {
			_, err := c.Keys.Create(ctx, KeyParams{Name: &name, Permissions: []string{"completions"}})
			return err
		}, "POST", "/api/keys", portal, `{"name":"ci","permissions":["completions"]}`},
		{func() error { _, err := c.Keys.List(ctx, "org 1"); return err }, "GET", "/api/v1/keys?org_id=org+1", portal, ""},
		{func() error { _, err := c.Keys.Update(ctx, "k/1", KeyParams{RotationDays: &days}); return err }, "PATCH", "/api/keys/k%2F1", portal, `{"rotation_days":30}`},
		{func() error { _, err := c.Keys.Rotate(ctx, "k1"); return err }, "POST", "/api/keys/k1/rotate", portal, `{}`},
		{func() error { _, err := c.Keys.Revoke(ctx, "k1"); return err }, "POST", "/api/keys/k1/revoke", portal, `{}`},
		{func() error { _, err := c.Receipts.List(ctx, ReceiptListParams{Limit: 5, Model: "m"}); return err }, "GET", "/api/v1/receipts?limit=5&model=m", portal, ""},
		{func() error { _, err := c.Receipts.Get(ctx, "rcpt_1"); return err }, "GET", "/api/v1/receipts/rcpt_1", portal, ""},
		{func() error { _, err := c.Receipts.VerifyOnline(ctx, `{"v":2}`); return err }, "POST", "/api/v1/receipts/verify", none, `{"receipt":{"v":2}}`},
		{func() error {
			_, err := c.Receipts.Countersign(ctx, CountersignParams{Attestation: "eyJ", Provider: "openai", Model: "m", HashUpstreamRequest: "a", HashUpstreamResponse: "b"})
			return err
		}, "POST", "/api/v1/receipts/countersign", key, `{"attestation":"eyJ","provider":"openai","model":"m","hash_upstream_request":"a","hash_upstream_response":"b"}`},
		{func() error { _, err := c.Receipts.SignedTreeHead(ctx); return err }, "GET", "/api/v1/transparency/sth", none, ""},
		{func() error { _, err := c.Receipts.InclusionProof(ctx, "rcpt_1"); return err }, "GET", "/api/v1/transparency/proof/rcpt_1", none, ""},
		{func() error { _, err := c.Receipts.ConsistencyProof(ctx, 3, 7); return err }, "GET", "/api/v1/transparency/consistency?first=3&second=7", none, ""},
		{func() error { _, err := c.Webhooks.Endpoints.List(ctx); return err }, "GET", "/api/v1/webhooks/endpoints", portal, ""},
		{func() error { _, err := c.Webhooks.Endpoints.Get(ctx, "4"); return err }, "GET", "/api/v1/webhooks/endpoints/4", portal, ""},
		{func() error {
			_, err := c.Webhooks.Endpoints.Update(ctx, "4", WebhookEndpointUpdate{Events: []string{"receipt.signed"}})
			return err
		}, "PATCH", "/api/v1/webhooks/endpoints/4", portal, `{"events":["receipt.signed"]}`},
		{func() error { return c.Webhooks.Endpoints.Delete(ctx, "4") }, "DELETE", "/api/v1/webhooks/endpoints/4", portal, ""},
		{func() error { _, err := c.Webhooks.Endpoints.RotateSecret(ctx, "4"); return err }, "POST", "/api/v1/webhooks/endpoints/4/rotate", portal, `{}`},
		{func() error { _, err := c.Webhooks.Endpoints.Resume(ctx, "4"); return err }, "POST", "/api/v1/webhooks/endpoints/4/resume", portal, `{}`},
		{func() error { _, err := c.Webhooks.Endpoints.Test(ctx, "4"); return err }, "POST", "/api/v1/webhooks/endpoints/4/test", portal, `{}`},
		{func() error {
			_, err := c.Webhooks.Deliveries.List(ctx, WebhookDeliveryListParams{EndpointID: "4", Status: "dead"})
			return err
		}, "GET", "/api/v1/webhooks/deliveries?endpoint_id=4&status=dead", portal, ""},
		{func() error { _, err := c.Webhooks.Deliveries.Get(ctx, "9"); return err }, "GET", "/api/v1/webhooks/deliveries/9", portal, ""},
		{func() error { _, err := c.Webhooks.Deliveries.Replay(ctx, "9"); return err }, "POST", "/api/v1/webhooks/deliveries/9/replay", portal, `{}`},
		{func() error { _, err := c.Billing.Balance(ctx); return err }, "GET", "/api/v1/billing/balance", portal, ""},
		{func() error { _, err := c.Billing.TopUp(ctx, "25.00"); return err }, "POST", "/api/v1/billing/topup", portal, `{"amount_usd":"25.00"}`},
		{func() error { _, err := c.Billing.CompleteDevCheckout(ctx, "chk_1"); return err }, "POST", "/api/v1/billing/dev/checkouts/chk_1/complete", portal, `{}`},
		{func() error { _, err := c.Billing.RedeemLicence(ctx, "LIC-1"); return err }, "POST", "/api/v1/billing/redeem-license", portal, `{"code":"LIC-1"}`},
		{func() error { _, err := c.Billing.Ledger(ctx, PageParams{Limit: 2, Cursor: "c"}); return err }, "GET", "/api/v1/billing/ledger?cursor=c&limit=2", portal, ""},
		{func() error { _, err := c.Billing.Usage(ctx, PageParams{From: "2026-01-01"}); return err }, "GET", "/api/v1/billing/usage?from=2026-01-01", portal, ""},
		{func() error { _, err := c.Self.Balance(ctx); return err }, "GET", "/api/v1/self/balance", key, ""},
		{func() error { _, err := c.Self.Usage(ctx, PageParams{To: "2026-02-01"}); return err }, "GET", "/api/v1/self/usage?to=2026-02-01", key, ""},
		{func() error { _, err := c.Self.Key(ctx); return err }, "GET", "/api/v1/self/key", key, ""},
		{func() error {
			_, err := c.CreateSelfServiceKey(ctx, SelfServiceKeyParams{Email: "a@example.com"})
			return err
		}, "POST", "/api/v1/self-service/key", none, `{"email":"a@example.com"}`},
	}
	for i, tc := range cases {
		if err := tc.call(); err != nil {
			t.Fatalf("case %d (%s %s): %v", i, tc.method, tc.target, err)
		}
		r, body := f.requests[len(f.requests)-1], f.bodies[len(f.bodies)-1]
		if r.Method != tc.method || r.URL.RequestURI() != tc.target || r.Header.Get("authorization") != tc.auth || body != tc.body {
			t.Errorf("case %d: sent %s %s auth %q body %s; want %s %s auth %q body %s", i, r.Method, r.URL.RequestURI(), r.Header.Get("authorization"), body, tc.method, tc.target, tc.auth, tc.body)
		}
		write := tc.method != "GET"
		if (r.Header.Get("idempotency-key") != "") != write || r.Header.Get("traceparent") == "" {
			t.Errorf("case %d: idempotency-key %q traceparent %q", i, r.Header.Get("idempotency-key"), r.Header.Get("traceparent"))
		}
	}
	// The answers decode into their types (ids as numbers or strings, nullable fields, exact receipt bytes).
	answer = `{"id":12,"endpoint_id":4,"event":"webhook.test","event_id":"evt_1","status":"pending","attempt_count":0,"last_http_code":null,"replay_of":11}`
	d, err := c.Webhooks.Deliveries.Replay(ctx, "11")
	if err != nil || d.ID != "12" || d.EndpointID != "4" || d.ReplayOf == nil || *d.ReplayOf != "11" || d.LastHTTPCode != nil {
		t.Fatalf("delivery %+v %v", d, err)
	}
	answer = `{"receipts":[{"v":"v1","jti":"rcpt_1","claims":{"model":"m","tokens_in":3},"sig":"x"}],"next_cursor":null}`
	page, err := c.Receipts.List(ctx, ReceiptListParams{})
	if err != nil || len(page.Receipts) != 1 || page.Receipts[0].Claims.TokensIn != 3 || page.NextCursor != nil ||
		string(page.Receipts[0].Raw) != `{"v":"v1","jti":"rcpt_1","claims":{"model":"m","tokens_in":3},"sig":"x"}` {
		t.Fatalf("receipts %+v %v", page, err)
	}
}

// A portal-token route without a portal token, and a key route without a key, are refused before anything is sent.
func TestRESTRefusesAMissingCredentialLocally(t *testing.T) {
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })
	c := testClient(t, srv.URL)
	_, err := c.Billing.Balance(context.Background())
	if e := asRelayError(t, err, "configuration_error"); e.Sent {
		t.Fatalf("%+v", e)
	}
	noKey, err := NewClient(srv.URL, WithConfigDir(t.TempDir()), WithPortalToken("spt_portal"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = noKey.Self.Balance(context.Background())
	asRelayError(t, err, "configuration_error")
	if len(f.requests) != 0 {
		t.Fatalf("%d requests were sent", len(f.requests))
	}
}

// A REST write retried after 429 Retry-After and a 503 carries the caller's Idempotency-Key and traceparent on every
// attempt; a 404 is not retried and answers the gateway's code.
func TestRESTWritesRetryWithTheCallersIdempotencyKey(t *testing.T) {
	var waits []time.Duration
	old := sleepHook
	sleepHook = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	defer func() { sleepHook = old }()
	n := 0
	srv, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		switch {
		case r.URL.Path == "/api/v1/billing/dev/checkouts/missing/complete":
			w.WriteHeader(404)
			w.Write([]byte(`{"error":{"code":"not_found","message":"no such checkout"}}`))
		case n == 1:
			w.Header().Set("retry-after", "3")
			w.WriteHeader(429)
		case n == 2:
			w.WriteHeader(503)
		default:
			w.WriteHeader(201)
			w.Write([]byte(`{"checkout_id":"chk_1","checkout_url":"https://pay.example/chk_1","amount_micros":25000000,"amount_usd":"25.00","status":"open","provider":"dev"}`))
		}
	})
	c := testClient(t, srv.URL, WithPortalToken("spt_portal"), WithRetries(2))
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	chk, err := c.Billing.TopUp(context.Background(), "25.00", CallOptions{IdempotencyKey: "topup-1", Traceparent: tp})
	if err != nil || chk.CheckoutID != "chk_1" || chk.AmountMicros != 25000000 {
		t.Fatalf("%+v %v", chk, err)
	}
	if len(f.requests) != 3 || waits[0] != 3*time.Second {
		t.Fatalf("%d requests, waits %v", len(f.requests), waits)
	}
	for i, r := range f.requests {
		if r.Header.Get("idempotency-key") != "topup-1" || r.Header.Get("traceparent") != tp || f.bodies[i] != `{"amount_usd":"25.00"}` {
			t.Fatalf("attempt %d: %v %s", i, r.Header, f.bodies[i])
		}
	}
	_, err = c.Billing.CompleteDevCheckout(context.Background(), "missing")
	if e := asRelayError(t, err, "not_found"); e.Status != 404 || len(f.requests) != 4 {
		t.Fatalf("%+v after %d requests", e, len(f.requests))
	}
}

// A context deadline ends a REST call that the gateway does not answer, as a typed error.
func TestRESTHonoursTheContextDeadline(t *testing.T) {
	srv, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := testClient(t, srv.URL, WithRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Self.Key(ctx)
	e := asRelayError(t, err, "timeout")
	if time.Since(start) > 5*time.Second || e.Sent {
		t.Fatalf("%+v after %v", e, time.Since(start))
	}
}

// NewClient refuses a linked engine library of another C ABI version with a typed error, before anything else.
func TestNewClientRefusesAnotherEngineABI(t *testing.T) {
	real := engine.LoadedABIVersion
	defer func() { engine.LoadedABIVersion = real }()
	engine.LoadedABIVersion = func() int { return engine.ABIVersion + 1 }
	_, err := NewClient("http://127.0.0.1:1", WithAPIKey(testKey), WithConfigDir(t.TempDir()))
	if e := asRelayError(t, err, "engine_abi_mismatch"); e.Sent || e.Status != 0 {
		t.Fatalf("%+v", e)
	}
}
