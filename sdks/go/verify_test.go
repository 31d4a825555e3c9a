package relay

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// receiptCase answers the input of a case of sdks/vectors/receipts.json (as JSON text) and the vectors' JWKS.
func receiptCase(t *testing.T, name string) (string, []byte) {
	raw, err := os.ReadFile("../vectors/receipts.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cases {
		if c.Name == name {
			var text string
			if json.Unmarshal(c.Input, &text) == nil {
				return text, doc.JWKS
			}
			return string(c.Input), doc.JWKS
		}
	}
	t.Fatalf("no receipts.json case %q", name)
	return "", nil
}

// otherJWKS is a JWKS with a fresh P-256 key: the gateway's set before it rotated in the vectors' key.
func otherJWKS(t *testing.T) []byte {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	x, y := make([]byte, 32), make([]byte, 32)
	k.X.FillBytes(x)
	k.Y.FillBytes(y)
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "EC", "crv": "P-256", "x": b64(x), "y": b64(y), "kid": "before-rotation", "alg": "ES256", "use": "sig"}}})
	return doc
}

// A receipt signed by a key the gateway rotated in after the client cached its JWKS verifies after one refetch;
// receipts naming unknown kids do not make the client refetch more than once per interval.
func TestJWKSIsRefetchedOnceOnAnUnknownKid(t *testing.T) {
	good, rotated := receiptCase(t, "v2 as JSON text, with a routing_decision")
	unknown, _ := receiptCase(t, "tampered: unknown kid")
	before := otherJWKS(t)
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != IdentityProbePath {
			t.Errorf("unexpected %s", r.URL.Path)
			return
		}
		if fetches.Add(1) == 1 {
			w.Write(before)
		} else {
			w.Write(rotated)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := testClient(t, srv.URL)
	if _, err := c.ready(ctx); err != nil {
		t.Fatal(err)
	}
	// Offline against the set cached before the rotation alone, the receipt reads as unknown kid.
	if v, err := VerifyReceipt(good, before, time.Time{}); err != nil || v.Valid || !strings.Contains(*v.Reason, unknownKidReason) {
		t.Fatalf("against the old set: %+v %v", v, err)
	}
	v, err := c.VerifyReceipt(ctx, good)
	if err != nil || !v.Valid || fetches.Load() != 2 {
		t.Fatalf("after the rotation: %+v %v, %d fetches", v, err, fetches.Load())
	}
	// Within the interval, an invented kid is refused without another fetch.
	v, err = c.VerifyReceipt(ctx, unknown)
	if err != nil || v.Valid || !strings.Contains(*v.Reason, unknownKidReason) || fetches.Load() != 2 {
		t.Fatalf("an invented kid: %+v %v, %d fetches", v, err, fetches.Load())
	}
	// A known kid never refetches; with no interval, an unknown kid refetches each time.
	eager := testClient(t, srv.URL, WithJWKSRefetchInterval(0))
	if v, err := eager.VerifyReceipt(ctx, good); err != nil || !v.Valid || fetches.Load() != 3 {
		t.Fatalf("known kid: %+v %v, %d fetches", v, err, fetches.Load())
	}
	for i := 0; i < 2; i++ {
		if v, err := eager.VerifyReceipt(ctx, unknown); err != nil || v.Valid {
			t.Fatalf("%+v %v", v, err)
		}
	}
	if fetches.Load() != 5 {
		t.Fatalf("%d fetches, want 5", fetches.Load())
	}
}
