package relay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Error is every failure this SDK reports: an answer of the gateway (Status > 0), or a refusal on this device before
// anything was sent (Status is the HTTP status the same refusal has on the gateway, e.g. 400 unsupported_field, and
// Sent is false). Use errors.As(err, &relayErr) to read it.
type Error struct {
	// Status is the HTTP status (0 for a transport failure or a configuration error).
	Status int
	// Code is the stable machine-readable code: gateway codes (insufficient_balance, rate_limited, ...), engine
	// codes (unsupported_field, invalid_request, invalid_json, ...) and SDK codes (configuration_error,
	// gateway_identity_failed, engine_abi_mismatch, connection_error, stream_error, timeout).
	Code    string
	Message string
	// RequestID is the gateway's X-Request-Id when it answered.
	RequestID string
	// Details are the error document's details (details.path for the egress policy).
	Details map[string]any
	// RetryAfter is the gateway's Retry-After, when it gave one.
	RetryAfter time.Duration
	// Sent reports whether the request reached the gateway.
	Sent bool
	// Body is the raw error answer.
	Body []byte

	hasRetryAfter bool
}

func (e *Error) Error() string {
	s := "privacy relay: " + e.Code
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

func configError(format string, args ...any) *Error {
	return &Error{Code: "configuration_error", Message: fmt.Sprintf(format, args...)}
}

// errorFromAnswer reads the gateway's error document: {error:{code,message,details}}, Anthropic's
// {type:"error",error:{type,message}} and OAuth's {error, error_description}.
func errorFromAnswer(res *http.Response, body []byte) *Error {
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("x-request-id"), Sent: true, Body: body}
	e.RetryAfter, e.hasRetryAfter = retryAfter(res.Header.Get("retry-after"))
	var doc map[string]any
	if json.Unmarshal(body, &doc) == nil {
		switch inner := doc["error"].(type) {
		case map[string]any:
			if c, ok := inner["code"].(string); ok {
				e.Code = c
			} else if t, ok := inner["type"].(string); ok {
				e.Code = t
			}
			e.Message, _ = inner["message"].(string)
			e.Details, _ = inner["details"].(map[string]any)
		case string:
			e.Code = inner
			e.Message, _ = doc["error_description"].(string)
		}
		if e.RequestID == "" {
			e.RequestID, _ = doc["request_id"].(string)
		}
	}
	if e.Code == "" {
		e.Code = "http_" + strconv.Itoa(res.StatusCode)
	}
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// retryAfter parses Retry-After (seconds or an HTTP date).
func retryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := time.Until(t)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
