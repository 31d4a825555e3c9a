package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"
)

func readAll(r io.Reader, limit int64) ([]byte, error) { return io.ReadAll(io.LimitReader(r, limit)) }

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// NewTraceparent answers a fresh W3C traceparent.
func NewTraceparent() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "00-" + hex.EncodeToString(b[:16]) + "-" + hex.EncodeToString(b[16:]) + "-01"
}

func retryable(status int) bool {
	return status == 408 || status == 429 || (status >= 500 && status != 501)
}

// sleepHook is replaced by tests.
var sleepHook = func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send sends body (the same bytes and headers on every attempt: the Idempotency-Key among them) and answers a 2xx
// response whose body the caller reads and closes, or an *Error.
func (c *Client) send(ctx context.Context, method, path string, headers map[string]string, body []byte, stream bool) (*http.Response, error) {
	var last *Error
	for attempt := 0; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if !stream && c.s.timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, c.s.timeout)
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(actx, method, c.GatewayURL+path, rd)
		if err != nil {
			cancel()
			return nil, configError("%v", err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := c.http.Do(req)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				// The caller's deadline is a timeout like the per-attempt one; a cancel is its own code.
				code := "canceled"
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					code = "timeout"
				}
				return nil, &Error{Code: code, Message: ctx.Err().Error()}
			}
			code := "connection_error"
			if errors.Is(err, context.DeadlineExceeded) {
				code = "timeout"
			}
			last = &Error{Code: code, Message: fmt.Sprintf("%s %s: %v", method, path, err)}
		} else if res.StatusCode < 300 {
			if !stream {
				// Read the whole body inside this attempt's deadline.
				b, rerr := readAll(res.Body, 64<<20)
				res.Body.Close()
				cancel()
				if rerr != nil {
					return nil, &Error{Code: "connection_error", Status: res.StatusCode, Message: rerr.Error(), Sent: true}
				}
				res.Body = io.NopCloser(bytes.NewReader(b))
				return res, nil
			}
			res.Body = cancelOnClose{res.Body, cancel}
			return res, nil
		} else {
			b, _ := readAll(res.Body, 1<<20)
			res.Body.Close()
			cancel()
			last = errorFromAnswer(res, b)
			if !retryable(res.StatusCode) {
				return nil, last
			}
		}
		if attempt >= c.s.retries {
			return nil, last
		}
		wait := backoff(attempt)
		if last.hasRetryAfter {
			wait = last.RetryAfter
		}
		if wait > c.s.maxRetryAfter {
			return nil, last // a wait that long is the caller's decision
		}
		if err := sleepHook(ctx, wait); err != nil {
			return nil, last
		}
	}
}

// backoff: exponential with full jitter, 0.5 s base, 8 s cap.
func backoff(attempt int) time.Duration {
	max := 500 * time.Millisecond << attempt
	if max > 8*time.Second {
		max = 8 * time.Second
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(max)))
	return time.Duration(n.Int64())
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
