package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// StoredReceipt is a receipt the gateway keeps for the organisation (v1 signed record). Raw is its exact JSON,
// what VerifyReceipt checks.
type StoredReceipt struct {
	V     string `json:"v"`
	Alg   string `json:"alg"`
	Kid   string `json:"kid"`
	Iss   string `json:"iss"`
	Sub   string `json:"sub"`
	Jti   string `json:"jti"`
	Iat   int64  `json:"iat"`
	Chain struct {
		ChainID  string `json:"chain_id"`
		Seq      int64  `json:"seq"`
		PrevHash string `json:"prev_hash"`
	} `json:"chain"`
	Claims struct {
		Capability           string         `json:"capability"`
		Provider             string         `json:"provider"`
		Model                string         `json:"model"`
		TokensIn             int64          `json:"tokens_in"`
		TokensOut            int64          `json:"tokens_out"`
		HashUpstreamRequest  string         `json:"hash_upstream_request"`
		HashUpstreamResponse string         `json:"hash_upstream_response"`
		RoutingDecision      map[string]any `json:"routing_decision"`
		TokenisationMode     string         `json:"tokenisation_mode"`
		EngineVersion        *string        `json:"engine_version"`
	} `json:"claims"`
	Sig string          `json:"sig"`
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the exact bytes in Raw.
func (r *StoredReceipt) UnmarshalJSON(b []byte) error {
	type plain StoredReceipt
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.Raw = append(json.RawMessage{}, b...)
	return nil
}

// ReceiptPage is one page of the organisation's receipts; NextCursor is nil on the last page.
type ReceiptPage struct {
	Receipts   []StoredReceipt `json:"receipts"`
	NextCursor *string         `json:"next_cursor"`
}

// ReceiptListParams filters client.Receipts.List (From/To: ISO 8601).
type ReceiptListParams struct {
	Limit  int
	Cursor string
	From   string
	To     string
	Model  string
}

// Countersignature is a receipt v3 countersignature (also the X-Service-Receipt-V3 header, decoded).
type Countersignature struct {
	V                    string  `json:"v"` // v3-countersignature
	Alg                  string  `json:"alg"`
	Kid                  string  `json:"kid"`
	Iss                  string  `json:"iss"`
	Jti                  string  `json:"jti"`
	Iat                  int64   `json:"iat"`
	Timestamp            string  `json:"timestamp"`
	AttestationJti       string  `json:"attestation_jti"`
	AttestationSHA256    string  `json:"attestation_sha256"`
	EgressSHA256         string  `json:"egress_sha256"`
	Provider             string  `json:"provider"`
	Model                string  `json:"model"`
	HashUpstreamRequest  string  `json:"hash_upstream_request"`
	HashUpstreamResponse string  `json:"hash_upstream_response"`
	Witness              string  `json:"witness"` // relayed or asserted
	ReceiptJti           *string `json:"receipt_jti"`
	Translation          *struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"translation,omitempty"`
	Sig string          `json:"sig"`
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the exact bytes in Raw.
func (c *Countersignature) UnmarshalJSON(b []byte) error {
	type plain Countersignature
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	c.Raw = append(json.RawMessage{}, b...)
	return nil
}

// CountersignParams asks the gateway to countersign a call made directly to a provider (bring your own
// provider): the attestation it was sent with and the hashes of the exact upstream bytes.
type CountersignParams struct {
	Attestation          any    `json:"attestation"` // the attestation header value or its decoded envelope
	Provider             string `json:"provider"`
	Model                string `json:"model"`
	HashUpstreamRequest  string `json:"hash_upstream_request"`
	HashUpstreamResponse string `json:"hash_upstream_response"`
}

// SignedTreeHead is the transparency log's signed tree head.
type SignedTreeHead struct {
	V         string          `json:"v"` // transparency-sth-v1
	Alg       string          `json:"alg"`
	Kid       string          `json:"kid"`
	Iss       string          `json:"iss"`
	TreeSize  int64           `json:"tree_size"`
	RootHash  string          `json:"root_hash"`
	Timestamp string          `json:"timestamp"`
	Sig       string          `json:"sig"`
	Raw       json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the exact bytes in Raw.
func (s *SignedTreeHead) UnmarshalJSON(b []byte) error {
	type plain SignedTreeHead
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	s.Raw = append(json.RawMessage{}, b...)
	return nil
}

// InclusionProof proves a receipt is leaf LeafIndex of the log at TreeSize (RFC 6962 audit path).
type InclusionProof struct {
	ReceiptID   string         `json:"receipt_id"`
	LeafIndex   int64          `json:"leaf_index"`
	TreeSize    int64          `json:"tree_size"`
	ReceiptHash string         `json:"receipt_hash"`
	LeafHash    string         `json:"leaf_hash"`
	AuditPath   []string       `json:"audit_path"`
	STH         SignedTreeHead `json:"sth"`
	// Raw is the proof's exact JSON (what VerifyInclusionProof checks).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the exact bytes in Raw.
func (p *InclusionProof) UnmarshalJSON(b []byte) error {
	type plain InclusionProof
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	p.Raw = append(json.RawMessage{}, b...)
	return nil
}

// ConsistencyProof proves the log at First is a prefix of the log at Second (RFC 6962).
type ConsistencyProof struct {
	First           int64          `json:"first"`
	Second          int64          `json:"second"`
	ConsistencyPath []string       `json:"consistency_path"`
	STH             SignedTreeHead `json:"sth"`
	// Raw is the proof's exact JSON (what VerifyConsistencyProof checks).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the exact bytes in Raw.
func (p *ConsistencyProof) UnmarshalJSON(b []byte) error {
	type plain ConsistencyProof
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	p.Raw = append(json.RawMessage{}, b...)
	return nil
}

// ReceiptsService is client.Receipts: the organisation's stored receipts (portal token), online verification
// and countersignatures (gateway key), the public transparency log.
type ReceiptsService struct{ c *Client }

// List lists the organisation's receipts, newest first.
func (s *ReceiptsService) List(ctx context.Context, p ReceiptListParams, opts ...CallOptions) (*ReceiptPage, error) {
	q := query("limit", p.Limit, "cursor", p.Cursor, "from", p.From, "to", p.To, "model", p.Model)
	return call[ReceiptPage](ctx, s.c, "GET", "/api/v1/receipts"+q, AuthPortal, nil, opts)
}

// Get answers one stored receipt by its jti.
func (s *ReceiptsService) Get(ctx context.Context, jti string, opts ...CallOptions) (*StoredReceipt, error) {
	return call[StoredReceipt](ctx, s.c, "GET", "/api/v1/receipts/"+pathEscape(jti), AuthPortal, nil, opts)
}

// VerifyOnline asks the gateway to verify a receipt (header value, JSON text or decoded object). Offline
// verification is VerifyReceipt against the cached JWKS (client.VerifyReceipt).
func (s *ReceiptsService) VerifyOnline(ctx context.Context, receipt any, opts ...CallOptions) (*Verification, error) {
	body := map[string]any{"receipt": receipt}
	if str, ok := receipt.(string); ok {
		var doc map[string]any
		if json.Unmarshal([]byte(str), &doc) == nil {
			body["receipt"] = doc
		}
	}
	v, err := call[Verification](ctx, s.c, "POST", "/api/v1/receipts/verify", AuthNone, body, opts)
	// An invalid receipt is answered 422 with the verdict: a verdict, not a failure of the call.
	var re *Error
	if errors.As(err, &re) && re.Status == 422 {
		var verdict Verification
		if json.Unmarshal(re.Body, &verdict) == nil && verdict.Reason != nil {
			return &verdict, nil
		}
	}
	return v, err
}

// Countersign asks for a v3 countersignature of a call made straight to a provider (gateway key).
func (s *ReceiptsService) Countersign(ctx context.Context, p CountersignParams, opts ...CallOptions) (*Countersignature, error) {
	return call[Countersignature](ctx, s.c, "POST", "/api/v1/receipts/countersign", AuthKey, p, opts)
}

// SignedTreeHead answers the transparency log's current signed tree head (public).
func (s *ReceiptsService) SignedTreeHead(ctx context.Context, opts ...CallOptions) (*SignedTreeHead, error) {
	return call[SignedTreeHead](ctx, s.c, "GET", "/api/v1/transparency/sth", AuthNone, nil, opts)
}

// InclusionProof answers the proof that the receipt jti is in the log (public).
func (s *ReceiptsService) InclusionProof(ctx context.Context, jti string, opts ...CallOptions) (*InclusionProof, error) {
	return call[InclusionProof](ctx, s.c, "GET", "/api/v1/transparency/proof/"+pathEscape(jti), AuthNone, nil, opts)
}

// ConsistencyProof answers the proof that the log at first is a prefix of the log at second (0: the current size).
func (s *ReceiptsService) ConsistencyProof(ctx context.Context, first, second int64, opts ...CallOptions) (*ConsistencyProof, error) {
	q := "?first=" + strconv.FormatInt(first, 10)
	if second > 0 {
		q += "&second=" + strconv.FormatInt(second, 10)
	}
	return call[ConsistencyProof](ctx, s.c, "GET", "/api/v1/transparency/consistency"+q, AuthNone, nil, opts)
}
