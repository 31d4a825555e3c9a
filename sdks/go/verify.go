package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// Verification is an offline verdict of a receipt.
type Verification struct {
	Valid  bool    `json:"valid"`
	Reason *string `json:"reason"`
	Checks []struct {
		Label  string `json:"label"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"checks"`
}

// VerifyReceipt verifies a receipt (v1, v2, failed, v3 countersignature; header value, JSON text) offline against
// a JWKS (the gateway's /api/.well-known/service-receipt-pubkeys.jwks). A tampered receipt is Valid false with a
// Reason; an error means the arguments were unusable (e.g. jwks_invalid).
func VerifyReceipt(receipt string, jwks []byte, now time.Time) (*Verification, error) {
	return verifyReceipt(receipt, jwks, now, "")
}

// VerifyCountersignature verifies a v3 countersignature (the X-Service-Receipt-V3 header value or JSON text)
// offline against the JWKS and checks it countersigns attestation (the X-Service-Attestation header value that was
// sent with the call).
func VerifyCountersignature(countersignature, attestation string, jwks []byte, now time.Time) (*Verification, error) {
	if attestation == "" {
		return nil, &Error{Code: "invalid_request", Message: "give the attestation the countersignature should countersign"}
	}
	return verifyReceipt(countersignature, jwks, now, attestation)
}

func verifyReceipt(receipt string, jwks []byte, now time.Time, attestation string) (*Verification, error) {
	opts := map[string]any{}
	if !now.IsZero() {
		opts["now_seconds"] = now.Unix()
	}
	if attestation != "" {
		opts["attestation"] = attestation
	}
	text, err := engine.VerifyReceipt(receipt, string(jwks), opts)
	if err != nil {
		return nil, fromEngine(err)
	}
	var v Verification
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, &Error{Code: "engine_error", Message: err.Error()}
	}
	return &v, nil
}

// WebhookVerification is VerifyWebhook's verdict: OK, or Code (missing_headers, malformed_header, bad_signature,
// stale_timestamp, malformed_body, missing_secret) and Message.
type WebhookVerification struct {
	OK      bool   `json:"ok"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// VerifyWebhook checks a webhook delivery: body exactly as received, its headers, the endpoint's secret (v1 with a
// tolerance, default 300 s; v0 fallback; constant time).
func VerifyWebhook(body []byte, headers map[string]string, secret string, tolerance time.Duration, now time.Time) (*WebhookVerification, error) {
	h, _ := json.Marshal(headers)
	opts := map[string]any{}
	if tolerance > 0 {
		opts["tolerance_seconds"] = int64(tolerance / time.Second)
	}
	if !now.IsZero() {
		opts["now_seconds"] = now.Unix()
	}
	text, err := engine.VerifyWebhook(body, string(h), secret, opts)
	if err != nil {
		return nil, fromEngine(err)
	}
	var v WebhookVerification
	return &v, json.Unmarshal([]byte(text), &v)
}

// VerifyReceipt verifies a receipt (header value or JSON text; v1, v2, failed, v3) offline against the gateway's
// JWKS, cached by the client. A receipt whose kid the cached set lacks triggers one refetch of the set (rate
// limited, WithJWKSRefetchInterval), so a receipt signed by a key rotated in later verifies.
func (c *Client) VerifyReceipt(ctx context.Context, receipt string) (*Verification, error) {
	return c.verifyRefreshing(ctx, receipt, "")
}

// VerifyCountersignature is VerifyCountersignature against the gateway's JWKS, with the same refetch policy.
func (c *Client) VerifyCountersignature(ctx context.Context, countersignature, attestation string) (*Verification, error) {
	if attestation == "" {
		return nil, &Error{Code: "invalid_request", Message: "give the attestation the countersignature should countersign"}
	}
	return c.verifyRefreshing(ctx, countersignature, attestation)
}

func (c *Client) verifyRefreshing(ctx context.Context, receipt, attestation string) (*Verification, error) {
	return c.withJWKS(ctx, func(jwks []byte) (*Verification, error) {
		return verifyReceipt(receipt, jwks, time.Time{}, attestation)
	})
}

// withJWKS runs verify against the cached JWKS and, when the verdict is an unknown kid, once more against a
// refetched set (rate limited: refetchJWKS).
func (c *Client) withJWKS(ctx context.Context, verify func(jwks []byte) (*Verification, error)) (*Verification, error) {
	jwks, err := c.ready(ctx)
	if err != nil {
		return nil, err
	}
	v, err := verify(jwks)
	if err != nil || v.Valid || v.Reason == nil || !strings.Contains(*v.Reason, unknownKidReason) {
		return v, err
	}
	fresh := c.refetchJWKS(ctx)
	if fresh == nil {
		return v, nil
	}
	return verify(fresh)
}

// unknownKidReason is the engine's verdict for a kid no published key has (sdks/vectors/receipts.json).
const unknownKidReason = "no published verification key has kid"

func (c *Client) verifyMeta(ctx context.Context, receipt map[string]any, attestation string) (*bool, *Verification) {
	if receipt == nil {
		return nil, nil
	}
	b, _ := json.Marshal(receipt)
	v, err := c.verifyRefreshing(ctx, string(b), attestation)
	if err != nil {
		f := false
		return &f, nil
	}
	return &v.Valid, v
}

// decodeHeader decodes a standard padded base64 JSON header value.
func decodeHeader(v string) map[string]any {
	if v == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// escapedMap is the alias map with the originals escaped for the inside of a JSON string.
func escapedMap(aliases [][2]string) string {
	out := make([][2]string, 0, len(aliases))
	for _, a := range aliases {
		q := marshalNoEscape(a[1])
		out = append(out, [2]string{a[0], string(q[1 : len(q)-1])})
	}
	return string(marshalNoEscape(out))
}

func marshalNoEscape(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// detokeniseJSON restores the originals in a JSON answer, value by value, keeping the answer's key order. A
// string value takes the originals as they are; an "arguments" value is JSON text inside a JSON string, so its
// originals go in JSON-escaped once for the inner text (the outer escaping is the encoder's). A text-level
// replace cannot tell the two apart and broke arguments whose original held a quote or a backslash.
func detokeniseJSON(answer []byte, mapJSON string) ([]byte, error) {
	var aliases [][2]string
	_ = json.Unmarshal([]byte(mapJSON), &aliases)
	if len(aliases) == 0 {
		var probe any
		if err := json.Unmarshal(answer, &probe); err != nil {
			return nil, err
		}
		return answer, nil
	}
	escaped := escapedMap(aliases)
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber()
	var out bytes.Buffer
	if err := restoreValue(dec, &out, "", mapJSON, escaped); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return out.Bytes(), nil
}

// restoreValue copies the next JSON value from dec to out, restoring aliases in its strings; key is the object
// key the value sits under ("" in an array or at the top).
func restoreValue(dec *json.Decoder, out *bytes.Buffer, key, mapJSON, escaped string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		out.WriteByte(byte(t))
		closing := json.Delim('}')
		if t == '[' {
			closing = ']'
		}
		for first := true; dec.More(); first = false {
			if !first {
				out.WriteByte(',')
			}
			childKey := ""
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				childKey, _ = k.(string)
				out.Write(marshalNoEscape(childKey))
				out.WriteByte(':')
			}
			if err := restoreValue(dec, out, childKey, mapJSON, escaped); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		if end != closing {
			return errors.New("unbalanced JSON")
		}
		out.WriteByte(byte(closing))
	case string:
		m := mapJSON
		if key == "arguments" {
			m = escaped
		}
		restored, err := engine.Detokenise(t, m)
		if err != nil {
			return err
		}
		out.Write(marshalNoEscape(restored))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		out.Write(marshalNoEscape(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}
