// Package relay is the Go SDK of Privacy Relay: every relay call is tokenised and attested on this device by the
// shared Rust engine (linked through its C ABI with cgo), sent to your gateway, and answered with the originals
// restored here, streams included. The client is gateway-locked: it talks only to an https (or loopback http) URL
// that answers the gateway identity probe, and sends no key before that probe passed.
//
//	client, err := relay.NewClient("https://gateway.example.com", relay.WithAPIKeyFile("~/.config/privacy-relay/gateway-key"))
//	answer, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "gpt-4o-mini",
//		Messages: []relay.ChatMessage{{Role: "user", Content: "Write to jane.doe@example.com"}}})
package relay

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/privacy-relay/sdk-go/internal/engine"
)

// EngineID is the engine id this SDK attests (accepted by the gateway's default allowlist from 0.1.0).
const EngineID = "relay-go"

// Version is this SDK's version (the attestation's engine.version).
const Version = "0.1.0"

// IdentityProbePath is the gateway identity probe: a JWKS of P-256 receipt keys.
const IdentityProbePath = "/api/.well-known/service-receipt-pubkeys.jwks"

var routePaths = map[string]string{
	"chat.completions":      "/api/v1/chat/completions",
	"messages":              "/api/v1/messages",
	"messages.count_tokens": "/api/v1/messages/count_tokens",
	"embeddings":            "/api/v1/embeddings",
	"responses":             "/api/v1/responses",
}

var gatewayKeyPattern = regexp.MustCompile(`^svc_[a-z2-7]+$`)

// Option configures a Client.
type Option func(*settings) error

type settings struct {
	apiKey, apiKeyFile string
	configDir          string
	httpClient         *http.Client
	retries            int
	timeout            time.Duration
	names              string
	maxRetryAfter      time.Duration
	portalToken        string
	mediaPolicy        string
	passthroughPaths   []string
	// jwksRefetchInterval: the least time between two JWKS refetches on an unknown kid.
	jwksRefetchInterval time.Duration
}

// WithAPIKey gives the gateway key (svc_...).
func WithAPIKey(key string) Option { return func(s *settings) error { s.apiKey = key; return nil } }

// WithAPIKeyFile reads the gateway key from a file readable only by you (mode 0600); a leading ~/ is your home.
func WithAPIKeyFile(path string) Option {
	return func(s *settings) error { s.apiKeyFile = path; return nil }
}

// WithConfigDir sets where the device attester key and alias secret live (default $PRIVACY_RELAY_CONFIG_DIR,
// else $XDG_CONFIG_HOME/privacy-relay, else ~/.config/privacy-relay; the same files as the other SDKs).
func WithConfigDir(dir string) Option {
	return func(s *settings) error { s.configDir = dir; return nil }
}

// WithHTTPClient uses your *http.Client (its Timeout is not used: give WithTimeout or a context deadline).
func WithHTTPClient(c *http.Client) Option {
	return func(s *settings) error { s.httpClient = c; return nil }
}

// WithRetries sets how many times a failed call is retried (default 2): 408, 429, 5xx except 501, and connection
// errors, with the same Idempotency-Key and the same bytes, waiting Retry-After when the gateway gives one.
func WithRetries(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return configError("retries must be >= 0")
		}
		s.retries = n
		return nil
	}
}

// WithTimeout bounds each attempt (default 60 s; a stream's body is bounded by the context only).
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error { s.timeout = d; return nil }
}

// WithJWKSRefetchInterval sets the least time between two refetches of the gateway's JWKS when a receipt names a
// key the cached set lacks (default 30 s; a receipt signed by a key rotated in after the client fetched the set
// verifies after one refetch).
func WithJWKSRefetchInterval(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return configError("the JWKS refetch interval cannot be negative")
		}
		s.jwksRefetchInterval = d
		return nil
	}
}

// WithNameModel chooses the person-name model: "builtin" (default) or "off".
func WithNameModel(m string) Option {
	return func(s *settings) error {
		if m != "builtin" && m != "off" {
			return configError(`name model must be "builtin" or "off", not %q`, m)
		}
		s.names = m
		return nil
	}
}

// WithMediaPolicy sets MEDIA_POLICY: "refuse" (default: an image or other media part is refused, 415
// unsupported_content) or "pass" (sent as it is, declared in the attestation's passthrough claim). "redact" needs an
// image redactor this engine does not have.
func WithMediaPolicy(p string) Option {
	return func(s *settings) error {
		if p != "refuse" && p != "pass" {
			return configError(`media policy must be "refuse" or "pass", not %q`, p)
		}
		s.mediaPolicy = p
		return nil
	}
}

// WithPassthroughPaths sets PASSTHROUGH_PATHS: JSON pointers ("*" for one segment) of fields to send untokenised,
// declared in the attestation.
func WithPassthroughPaths(paths ...string) Option {
	return func(s *settings) error {
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") {
				return configError("passthrough path %q is not a JSON pointer (it starts with /)", p)
			}
		}
		s.passthroughPaths = append([]string{}, paths...)
		return nil
	}
}

// Client is a Privacy Relay client; safe for concurrent use.
type Client struct {
	GatewayURL string
	Chat       *ChatService
	Messages   *MessagesService
	Embeddings *EmbeddingsService
	Models     *ModelsService
	Responses  *ResponsesService
	// The REST capability set (rest_*.go): portal-token routes need WithPortalToken.
	Keys     *KeysService
	Receipts *ReceiptsService
	Webhooks *WebhooksService
	Billing  *BillingService
	Self     *SelfOrgService

	s       settings
	http    *http.Client
	info    engine.Info
	apiKey  string
	devOnce sync.Once
	devKey  string
	secret  []byte
	devErr  error

	idMu        sync.Mutex
	jwks        json.RawMessage
	lastRefetch time.Time
}

// NewClient checks the gateway URL, the key and the engine library (its C ABI version) and answers a client.
// Nothing is sent before the first call; that call first probes the gateway's identity.
func NewClient(gatewayURL string, opts ...Option) (*Client, error) {
	s := settings{mediaPolicy: "refuse", passthroughPaths: []string{}, retries: 2, timeout: 60 * time.Second, names: "builtin", maxRetryAfter: 60 * time.Second,
		jwksRefetchInterval: 30 * time.Second}
	for _, o := range opts {
		if err := o(&s); err != nil {
			return nil, err
		}
	}
	base, err := parseGatewayURL(gatewayURL)
	if err != nil {
		return nil, err
	}
	if s.apiKey != "" && s.apiKeyFile != "" {
		return nil, configError("give WithAPIKey or WithAPIKeyFile, not both")
	}
	key := s.apiKey
	if s.apiKeyFile != "" {
		if key, err = readGatewayKeyFile(s.apiKeyFile); err != nil {
			return nil, err
		}
	}
	if key != "" && !gatewayKeyPattern.MatchString(key) {
		return nil, configError("the API key is not a gateway key (svc_...)")
	}
	if err := engine.CheckABI(); err != nil {
		var ee *engine.Error
		errors.As(err, &ee)
		return nil, &Error{Code: "engine_abi_mismatch", Message: ee.Message}
	}
	info, err := engine.EngineInfo()
	if err != nil {
		return nil, &Error{Code: "engine_unavailable", Message: err.Error()}
	}
	hc := s.httpClient
	if hc == nil {
		hc = &http.Client{}
	}
	// Never follow a redirect: the key must reach only the gateway that answered the probe.
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cl := &Client{GatewayURL: base, s: s, http: &c, info: info, apiKey: key}
	cl.Chat = &ChatService{Completions: &ChatCompletionsService{c: cl}}
	cl.Messages = &MessagesService{c: cl}
	cl.Embeddings = &EmbeddingsService{c: cl}
	cl.Models = &ModelsService{c: cl}
	cl.Webhooks = &WebhooksService{Endpoints: &WebhookEndpointsService{c: cl}, Deliveries: &WebhookDeliveriesService{c: cl}}
	cl.Keys = &KeysService{c: cl}
	cl.Receipts = &ReceiptsService{c: cl}
	cl.Billing = &BillingService{c: cl}
	cl.Self = &SelfOrgService{c: cl}
	cl.Responses = &ResponsesService{c: cl}
	return cl, nil
}

// Engine describes the engine in use: the id attested (relay-go), this SDK's version and the core build's sha256.
func (c *Client) Engine() (id, version, sha256 string) { return EngineID, Version, c.info.SHA256 }

func parseGatewayURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", configError("the gateway URL is not set: give the base URL of your Privacy Relay gateway (https://...)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", configError("the gateway URL must be an https URL, not %q", raw)
	}
	if u.User != nil {
		return "", configError("the gateway URL must not carry credentials; give the key with WithAPIKey or WithAPIKeyFile")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", configError("the gateway URL must not have a query or fragment")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", configError("gateway URL http://%s is plain http to a non-loopback host; a gateway must be reached over https (plain http is allowed only to 127.0.0.1/localhost for development)", u.Host)
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/"), nil
}

func isLoopback(host string) bool {
	h := strings.ToLower(strings.Trim(host, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "::1" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.To4() != nil && ip.To4()[0] == 127
}

// ---- device files (same names and formats as the TypeScript and Python SDKs) ---------------------------------

func expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", configError("cannot expand ~: %v", err)
		}
		return filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")), nil
	}
	if strings.HasPrefix(p, "~") {
		return "", configError("%s: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path", p)
	}
	return p, nil
}

func assertPrivateFile(path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return configError("%s %s does not exist", what, path)
		}
		return configError("%s %s cannot be read: %v", what, path, err)
	}
	if !st.Mode().IsRegular() {
		return configError("%s %s is not a regular file", what, path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return configError("%s %s is readable by other users (mode %03o); refusing to use it. Fix: chmod 600 %s", what, path, st.Mode().Perm(), path)
	}
	return nil
}

func readGatewayKeyFile(p string) (string, error) {
	path, err := expandHome(p)
	if err != nil {
		return "", err
	}
	if err := assertPrivateFile(path, "Gateway key file"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", configError("Gateway key file %s cannot be read: %v", path, err)
	}
	key := strings.TrimSpace(string(b))
	if !gatewayKeyPattern.MatchString(key) {
		return "", configError("Gateway key file %s does not hold a gateway key (expected one line starting with svc_)", path)
	}
	return key, nil
}

func (c *Client) configDir() (string, error) {
	if c.s.configDir != "" {
		return expandHome(c.s.configDir)
	}
	if d := os.Getenv("PRIVACY_RELAY_CONFIG_DIR"); d != "" {
		return expandHome(d)
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		d, err := expandHome(d)
		return filepath.Join(d, "privacy-relay"), err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", configError("no home directory for the device key: use WithConfigDir")
	}
	return filepath.Join(home, ".config", "privacy-relay"), nil
}

func createExclusive(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return configError("cannot create %s: %v", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil // another process made it first: both use that one
	}
	if err != nil {
		return configError("cannot create %s: %v", path, err)
	}
	defer f.Close()
	_, err = f.WriteString(content)
	return err
}

// device loads (or creates) attester-key.json and alias-secret.
func (c *Client) device() (string, []byte, error) {
	c.devOnce.Do(func() {
		dir, err := c.configDir()
		if err != nil {
			c.devErr = err
			return
		}
		keyPath := filepath.Join(dir, "attester-key.json")
		k, err := engine.GenerateDeviceKey()
		if err != nil {
			c.devErr = err
			return
		}
		if err := createExclusive(keyPath, string(k.PrivateJWK)+"\n"); err != nil {
			c.devErr = err
			return
		}
		if err := assertPrivateFile(keyPath, "Device attester key file"); err != nil {
			c.devErr = err
			return
		}
		b, err := os.ReadFile(keyPath)
		if err != nil {
			c.devErr = configError("cannot read %s: %v", keyPath, err)
			return
		}
		c.devKey = strings.TrimSpace(string(b))
		secretPath := filepath.Join(dir, "alias-secret")
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			c.devErr = err
			return
		}
		if err := createExclusive(secretPath, base64.RawURLEncoding.EncodeToString(fresh)+"\n"); err != nil {
			c.devErr = err
			return
		}
		if err := assertPrivateFile(secretPath, "Stable-alias secret file"); err != nil {
			c.devErr = err
			return
		}
		b, err = os.ReadFile(secretPath)
		if err == nil {
			c.secret, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(string(b)), "="))
		}
		if err != nil || len(c.secret) < 32 {
			c.devErr = configError("Stable-alias secret file %s does not hold 32 base64url bytes; move it away to generate a new one", secretPath)
		}
	})
	return c.devKey, c.secret, c.devErr
}

// ---- gateway identity ---------------------------------------------------------------------------------------

// ready runs the identity probe once (again after a failure): nothing with a key is sent before it passed. Its
// answer is the JWKS the receipts are verified against.
func (c *Client) ready(ctx context.Context) (json.RawMessage, error) {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	if c.jwks != nil {
		return c.jwks, nil
	}
	body, err := c.fetchJWKS(ctx)
	if err != nil {
		return nil, err
	}
	c.jwks = body
	return body, nil
}

// fetchJWKS asks the gateway for its receipt keys (the identity probe) and checks they are public P-256 keys.
func (c *Client) fetchJWKS(ctx context.Context) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.GatewayURL+IdentityProbePath, nil)
	if err != nil {
		return nil, configError("%v", err)
	}
	req.Header.Set("accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, &Error{Code: "gateway_unreachable", Message: fmt.Sprintf("%s did not answer the gateway identity probe: %v", c.GatewayURL, err)}
	}
	defer res.Body.Close()
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	body, _ := readAll(res.Body, 1<<20)
	if res.StatusCode != 200 || json.Unmarshal(body, &doc) != nil || len(doc.Keys) == 0 {
		return nil, &Error{Code: "gateway_identity_failed", Status: res.StatusCode, Message: fmt.Sprintf("%s is not a Privacy Relay gateway (its identity probe %s did not answer a JWKS of receipt keys); nothing was sent", c.GatewayURL, IdentityProbePath)}
	}
	for _, k := range doc.Keys {
		if k["kty"] != "EC" || k["crv"] != "P-256" || k["d"] != nil {
			return nil, &Error{Code: "gateway_identity_failed", Status: res.StatusCode, Message: fmt.Sprintf("%s answered the identity probe with a key that is not a public P-256 key; nothing was sent", c.GatewayURL)}
		}
	}
	return body, nil
}

// refetchJWKS fetches the JWKS again because a receipt names a kid the cached set lacks (the set may predate a key
// rotation: rotated-out keys stay published, so only a newer key can be missing). At most one refetch per
// jwksRefetchInterval, so receipts with invented kids cannot make the client hammer the gateway. Answers the
// fresh set, or nil when none was fetched.
func (c *Client) refetchJWKS(ctx context.Context) json.RawMessage {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	if !c.lastRefetch.IsZero() && time.Since(c.lastRefetch) < c.s.jwksRefetchInterval {
		return nil
	}
	c.lastRefetch = time.Now()
	body, err := c.fetchJWKS(ctx)
	if err != nil {
		return nil
	}
	c.jwks = body
	return body
}

// prepared is what leaves the device for one call, and what stays to restore the answer.
type prepared struct {
	route   string
	body    []byte
	headers map[string]string
	mapJSON string
	aliases [][2]string
}

// prepare tokenises body for route and attests the exact bytes with the device key.
func (c *Client) prepare(route string, body any, idempotencyKey string) (*prepared, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Code: "invalid_request", Status: 400, Message: "the request body does not encode as JSON: " + err.Error()}
	}
	devKey, secret, err := c.device()
	if err != nil {
		return nil, err
	}
	// The engine applies the egress policy (sdks/vectors/egress-policy.json): end-user identifiers get device-stable
	// USER_ aliases under the device alias secret; anything the policy does not name is refused, nothing sent.
	opts := map[string]any{"names": c.s.names, "identifier_secret_hex": hex.EncodeToString(secret),
		"media_policy": c.s.mediaPolicy, "passthrough_paths": c.s.passthroughPaths}
	if route == "embeddings" {
		opts["stable_alias_secret_hex"] = hex.EncodeToString(secret)
	}
	if idempotencyKey != "" {
		opts["device_alias_secret_hex"] = hex.EncodeToString(secret)
		opts["idempotency_key"] = idempotencyKey
	}
	t, err := engine.TokeniseRequest(route, string(raw), opts)
	if err != nil {
		return nil, fromEngine(err)
	}
	input := map[string]any{
		"route": route, "body": t.BodyText, "body_is_canonical": true, "detectors_fired": t.DetectorsFired,
		"engine": map[string]any{"id": EngineID, "version": Version, "sha256": c.info.SHA256},
	}
	if len(t.Passthrough) > 0 && string(t.Passthrough) != "null" && string(t.Passthrough) != "[]" {
		input["passthrough"] = t.Passthrough
	}
	att, err := engine.BuildAttestation(input, devKey)
	if err != nil {
		return nil, fromEngine(err)
	}
	m, _ := json.Marshal(t.Map)
	return &prepared{route: route, body: []byte(t.BodyText), mapJSON: string(m), aliases: t.Map,
		headers: map[string]string{"x-service-engine": att.EngineHeader, "x-service-attestation": att.Header}}, nil
}

// fromEngine maps an engine error to *Error (nothing was sent).
func fromEngine(err error) error {
	var ee *engine.Error
	if !errors.As(err, &ee) {
		return &Error{Code: "engine_error", Message: err.Error()}
	}
	status := 0
	switch ee.Code {
	case "invalid_request", "unsupported_field", "invalid_json", "invalid_utf8", "nesting_too_deep":
		status = 400
	case "unsupported_content":
		status = 415
	}
	return &Error{Status: status, Code: ee.Code, Message: ee.Message + " (nothing was sent)", Details: ee.Details}
}
