package relay

import (
	"context"
	"encoding/json"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// VerifyInclusionProof verifies a transparency-log inclusion proof (the JSON of GET
// /api/v1/transparency/proof/{jti}) on this device: the signed tree head inside it against jwks, the audit path
// to its root (RFC 9162), and, when receipt is given (its exact JSON), that the proof is about that receipt.
// Checks as in sdks/vectors/transparency.json.
func VerifyInclusionProof(proof, receipt, jwks []byte) (*Verification, error) {
	opts := map[string]any{}
	if len(receipt) > 0 {
		opts["receipt"] = json.RawMessage(receipt)
	}
	return verdict(engine.VerifyInclusionProof(string(proof), "", string(jwks), opts))
}

// VerifyConsistencyProof verifies that the log whose signed tree head you kept (oldHead) is a prefix of the newer
// head inside proof (the JSON of GET /api/v1/transparency/consistency): both heads' signatures and the
// consistency path (RFC 9162). A fork or a rollback is Valid false with a Reason.
func VerifyConsistencyProof(proof, oldHead, jwks []byte) (*Verification, error) {
	return verdict(engine.VerifyConsistencyProof(string(proof), string(oldHead), string(jwks), nil))
}

func verdict(text string, err error) (*Verification, error) {
	if err != nil {
		return nil, fromEngine(err)
	}
	var v Verification
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, &Error{Code: "engine_error", Message: err.Error()}
	}
	return &v, nil
}

// VerifyInclusion fetches the inclusion proof of a receipt-v2 (or failed-call receipt: the log's leaves, e.g. a
// relay answer's Meta.Receipt) and verifies it on this device against the gateway's JWKS (refetched once on an
// unknown kid), bound to that receipt.
func (s *ReceiptsService) VerifyInclusion(ctx context.Context, receipt map[string]any, opts ...CallOptions) (*Verification, error) {
	jti, _ := receipt["jti"].(string)
	if jti == "" {
		return nil, &Error{Code: "invalid_request", Message: "give a receipt-v2 with its jti (a relay answer's Meta.Receipt)"}
	}
	raw, err := json.Marshal(receipt)
	if err != nil {
		return nil, &Error{Code: "invalid_request", Message: err.Error()}
	}
	proof, err := s.InclusionProof(ctx, jti, opts...)
	if err != nil {
		return nil, err
	}
	return s.c.withJWKS(ctx, func(jwks []byte) (*Verification, error) { return VerifyInclusionProof(proof.Raw, raw, jwks) })
}

// VerifyConsistency fetches the proof that the log whose head you kept (oldHead, e.g. from an earlier
// SignedTreeHead) extends to the current one, verifies it on this device, and answers the verdict and the new
// head (keep it for the next check).
func (s *ReceiptsService) VerifyConsistency(ctx context.Context, oldHead *SignedTreeHead, opts ...CallOptions) (*Verification, *SignedTreeHead, error) {
	if oldHead == nil || len(oldHead.Raw) == 0 {
		return nil, nil, &Error{Code: "invalid_request", Message: "give the signed tree head you kept (client.Receipts.SignedTreeHead)"}
	}
	proof, err := s.ConsistencyProof(ctx, oldHead.TreeSize, 0, opts...)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.c.withJWKS(ctx, func(jwks []byte) (*Verification, error) { return VerifyConsistencyProof(proof.Raw, oldHead.Raw, jwks) })
	if err != nil {
		return nil, nil, err
	}
	return v, &proof.STH, nil
}

// SignWebhook answers the X-Service-Signature value a sender puts on body at timestamp (seconds): for testing a
// receiver with VerifyWebhook.
func SignWebhook(body []byte, secret string, timestamp int64) (string, error) {
	sig, err := engine.SignWebhook("v1", string(body), secret, map[string]any{"timestamp": timestamp})
	if err != nil {
		return "", fromEngine(err)
	}
	return sig, nil
}
