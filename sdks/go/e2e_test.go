package relay_test

// End to end against a real gateway process (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the
// fake provider (programs/fake-provider.ts, streaming in 5-character pieces so aliases are cut across SSE frames),
// started as the Python SDK's tests/gateway.py does, stopped by PID. Needs the repository's node
// (node_modules/.bin/node after npm install); skipped without it unless PR_GO_E2E_REQUIRED=1 (sdks/go/ci.sh).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	relay "github.com/privacy-relay/sdk-go"
)

const prompt = "Write to jane.doe@example.com and call +44 20 7946 0958 about IBAN DE89 3704 0044 0532 0130 00."

var originals = []string{"jane.doe@example.com", "+44 20 7946 0958", "DE89 3704 0044 0532 0130 00"}

type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	found chan map[string]any
}

func start(t *testing.T, repo string, env []string, needle string, args ...string) (*proc, map[string]any) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, "node_modules", ".bin", "node"), args...)
	cmd.Dir, cmd.Env = repo, env
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, found: make(chan map[string]any, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			if !sent && strings.Contains(line, needle) {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil {
					p.found <- m
					sent = true
				}
			}
		}
		close(p.found)
	}()
	select {
	case m, ok := <-p.found:
		if !ok {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("%v exited before %q:\n%s", args, needle, strings.Join(p.lines, "\n"))
		}
		return p, m
	case <-time.After(150 * time.Second):
		t.Fatalf("%v did not log %q in time", args, needle)
	}
	return nil, nil
}

type gateway struct {
	url, provider, dataDir string
	keys                   int
	lastPrefix             string
}

func startGateway(t *testing.T) *gateway {
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	if _, err := os.Stat(filepath.Join(repo, "node_modules", ".bin", "node")); err != nil {
		if os.Getenv("PR_GO_E2E_REQUIRED") == "1" {
			t.Fatal("node_modules/.bin/node is missing: run npm install at the repository root")
		}
		t.Skip("no node_modules/.bin/node: run npm install for the end-to-end tests")
	}
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "REDIS_URL=") {
			base = append(base, kv)
		}
	}
	_, m := start(t, repo, base, "fake provider listening", "programs/fake-provider.ts", "--host", "127.0.0.1", "--port", "0", "--stream-piece-chars", "5")
	providerURL, _ := m["url"].(string)
	dataDir := t.TempDir()
	env := append(base, "DATA_DIR="+dataDir, "PORT=0", "HOST=127.0.0.1", "LOCAL_PROVIDER_URL="+providerURL, "PAYMENTS_PROVIDER=dev",
		"WEBHOOK_ALLOW_LOOPBACK=1", "TRUSTED_PROXIES=127.0.0.1", "LOG_LEVEL=info")
	_, m = start(t, repo, env, "gateway listening", "programs/gateway.ts")
	ann, _ := m["annotations"].(map[string]any)
	u, _ := ann["url"].(string)
	return &gateway{url: strings.Replace(u, "0.0.0.0", "127.0.0.1", 1), provider: providerURL, dataDir: dataDir}
}

func postJSON(t *testing.T, url string, body any, headers map[string]string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("content-type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// fundedKeyFile issues a self-service key, credits its wallet through the admin API and writes it to a 0600 file.
func (g *gateway) fundedKeyFile(t *testing.T) string {
	g.keys++
	key := postJSON(t, g.url+"/api/v1/self-service/key", map[string]any{}, map[string]string{"x-forwarded-for": fmt.Sprintf("198.18.0.%d", g.keys)})
	token, err := os.ReadFile(filepath.Join(g.dataDir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	postJSON(t, g.url+"/api/admin/wallets/credit", map[string]any{"key_prefix": key["key_prefix"], "usd": "10"},
		map[string]string{"authorization": "Bearer " + strings.TrimSpace(string(token))})
	g.lastPrefix, _ = key["key_prefix"].(string)
	path := filepath.Join(t.TempDir(), "gateway-key")
	if err := os.WriteFile(path, []byte(key["api_key"].(string)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// received is what the fake provider received since the last reset.
func (g *gateway) received(t *testing.T) []string {
	res, err := http.Get(g.provider + "/_fake/received")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Requests []struct {
			Body string `json:"body"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range doc.Requests {
		out = append(out, r.Body)
	}
	if r, err := http.Post(g.provider+"/_fake/reset", "application/json", nil); err == nil {
		r.Body.Close()
	}
	return out
}

func (g *gateway) assertOnlyAliases(t *testing.T, wantRequests int) []string {
	t.Helper()
	bodies := g.received(t)
	if len(bodies) != wantRequests {
		t.Fatalf("the provider received %d requests, want %d", len(bodies), wantRequests)
	}
	for _, b := range bodies {
		for _, o := range originals {
			if strings.Contains(b, o) || strings.Contains(b, "jane.doe") {
				t.Fatalf("the provider saw an original value %q in %s", o, b)
			}
		}
	}
	return bodies
}

func TestEndToEnd(t *testing.T) {
	g := startGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client, err := relay.NewClient(g.url, relay.WithAPIKeyFile(g.fundedKeyFile(t)), relay.WithConfigDir(t.TempDir()),
		relay.WithNameModel("off"), relay.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	g.received(t) // reset

	t.Run("chat", func(t *testing.T) {
		answer, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		if answer.Text() != "Echo: "+prompt {
			t.Fatalf("answer %q", answer.Text())
		}
		sent := g.assertOnlyAliases(t, 1)[0]
		for _, tag := range []string{"<EMAIL_1_", "<PHONE_1_", "<IBAN_1_"} {
			if !strings.Contains(sent, tag) {
				t.Errorf("sent body lacks %s: %s", tag, sent)
			}
		}
		if answer.Meta.RequestID == "" || answer.Meta.Receipt == nil || answer.Meta.Receipt["v"] != float64(2) {
			t.Fatalf("meta %+v", answer.Meta)
		}
		if answer.Meta.ReceiptVerified == nil || !*answer.Meta.ReceiptVerified {
			t.Fatalf("receipt not verified: %+v", answer.Meta.ReceiptVerification)
		}
		// Offline again against the published JWKS: a changed receipt no longer verifies.
		res, err := http.Get(g.url + relay.IdentityProbePath)
		if err != nil {
			t.Fatal(err)
		}
		jwks, _ := io.ReadAll(res.Body)
		res.Body.Close()
		good, _ := json.Marshal(answer.Meta.Receipt)
		if v, err := relay.VerifyReceipt(string(good), jwks, time.Time{}); err != nil || !v.Valid {
			t.Fatalf("offline verification: %+v %v", v, err)
		}
		tampered := map[string]any{}
		for k, v := range answer.Meta.Receipt {
			tampered[k] = v
		}
		tampered["output_tokens"] = answer.Meta.Receipt["output_tokens"].(float64) + 1
		bad, _ := json.Marshal(tampered)
		if v, err := relay.VerifyReceipt(string(bad), jwks, time.Time{}); err != nil || v.Valid || v.Reason == nil || !strings.HasPrefix(*v.Reason, "signature:") {
			t.Fatalf("a tampered receipt: %+v %v", v, err)
		}
		// The gateway's v3 countersignature of the attestation sent, verified and bound to it.
		cs := answer.Meta.Countersignature
		if cs == nil || cs["v"] != "v3-countersignature" || answer.Meta.CountersignatureVerified == nil || !*answer.Meta.CountersignatureVerified {
			t.Fatalf("countersignature %v: %+v", cs, answer.Meta.CountersignatureVerification)
		}
		csText, _ := json.Marshal(cs)
		other, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: "hello"}}})
		if err != nil {
			t.Fatal(err)
		}
		g.received(t)
		if v, err := relay.VerifyCountersignature(string(csText), other.Meta.Attestation, jwks, time.Time{}); err != nil || v.Valid {
			t.Fatalf("a countersignature checked against another attestation: %+v %v", v, err)
		}
	})

	t.Run("chat stream restores aliases cut across frames", func(t *testing.T) {
		stream, err := client.Chat.Completions.NewStreaming(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		events := 0
		for stream.Next() {
			ev := stream.Current()
			if strings.Contains(ev.Text, "<") {
				t.Errorf("an alias (or part of one) reached the caller: %q", ev.Text)
			}
			text.WriteString(ev.Text)
			events++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if text.String() != "Echo: "+prompt || events < 10 {
			t.Fatalf("streamed %q in %d events", text.String(), events)
		}
		sent := g.assertOnlyAliases(t, 1)[0]
		if !strings.Contains(sent, `"stream":true`) {
			t.Errorf("sent %s", sent)
		}
		meta := stream.Meta()
		if meta.Receipt == nil || meta.ReceiptVerified == nil || !*meta.ReceiptVerified || meta.RequestID == "" {
			t.Fatalf("stream meta %+v", meta)
		}
	})

	t.Run("messages stream", func(t *testing.T) {
		stream, err := client.Messages.NewStreaming(ctx, relay.MessageParams{Model: "local-chat", MaxTokens: 64,
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		for stream.Next() {
			text.WriteString(stream.Current().Text)
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "jane.doe@example.com") || strings.Contains(text.String(), "<EMAIL") {
			t.Fatalf("messages streamed %q", text.String())
		}
		g.assertOnlyAliases(t, 1)
		if m := stream.Meta(); m.ReceiptVerified == nil || !*m.ReceiptVerified {
			t.Fatalf("messages receipt %+v", m)
		}
	})

	t.Run("messages", func(t *testing.T) {
		m, err := client.Messages.Create(ctx, relay.MessageParams{Model: "local-chat", MaxTokens: 64,
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Content) == 0 || !strings.Contains(m.Content[0].Text, "jane.doe@example.com") {
			t.Fatalf("message %s", m.Raw)
		}
		g.assertOnlyAliases(t, 1)
	})

	t.Run("embeddings use device-stable aliases", func(t *testing.T) {
		p := relay.EmbeddingParams{Model: "local-embed", Input: []string{"mail jane.doe@example.com"}}
		first, err := client.Embeddings.Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		second, err := client.Embeddings.Create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Data) != 1 || len(first.Data[0].Embedding) == 0 {
			t.Fatalf("embeddings %s", first.Raw)
		}
		if !bytes.Equal(first.Meta.TokenisedRequest, second.Meta.TokenisedRequest) || !strings.Contains(string(first.Meta.TokenisedRequest), "<EMAIL_") {
			t.Fatalf("stable aliases: %s vs %s", first.Meta.TokenisedRequest, second.Meta.TokenisedRequest)
		}
		g.assertOnlyAliases(t, 2)
		if first.Meta.ReceiptVerified == nil || !*first.Meta.ReceiptVerified {
			t.Fatalf("embeddings receipt %+v", first.Meta)
		}
	})

	t.Run("end-user identifiers leave as USER_ aliases and the gateway accepts them; an invented field is refused locally", func(t *testing.T) {
		answer, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt, Name: "Jane Doe"}},
			Extra:    map[string]any{"user": "jane.doe@example.com", "metadata": map[string]any{"customer": "jane.doe@example.com"}}})
		if err != nil {
			t.Fatal(err)
		}
		sent := g.assertOnlyAliases(t, 1)[0]
		if !strings.Contains(sent, `"user":"USER_`) || strings.Contains(sent, "Jane Doe") || answer.Meta.ReceiptVerified == nil || !*answer.Meta.ReceiptVerified {
			t.Fatalf("sent %s", sent)
		}
		_, err = client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}, Extra: map[string]any{"x_note": "jane.doe@example.com"}})
		var re *relay.Error
		if !errors.As(err, &re) || re.Code != "unsupported_field" || re.Details["path"] != "/x_note" || re.Sent {
			t.Fatalf("invented field: %v", err)
		}
		g.assertOnlyAliases(t, 0)
	})

	t.Run("responses", func(t *testing.T) {
		r, err := client.Responses.Create(ctx, relay.ResponseParams{Model: "local-chat", Input: prompt})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.OutputText(), "jane.doe@example.com") || strings.Contains(r.OutputText(), "<EMAIL") {
			t.Fatalf("responses %s", r.Raw)
		}
		g.assertOnlyAliases(t, 1)
		if r.Meta.ReceiptVerified == nil || !*r.Meta.ReceiptVerified {
			t.Fatalf("responses receipt %+v", r.Meta)
		}
	})

	t.Run("responses stream restores aliases cut across events", func(t *testing.T) {
		stream, err := client.Responses.NewStreaming(ctx, relay.ResponseParams{Model: "local-chat", Input: prompt})
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		deltas, completed := 0, false
		for stream.Next() {
			ev := stream.Current()
			if strings.Contains(string(ev.Data), "<EMAIL") || strings.Contains(ev.Text, "<") {
				t.Errorf("an alias (or part of one) reached the caller: %s", ev.Data)
			}
			text.WriteString(ev.Text)
			if ev.Event == "response.output_text.delta" {
				deltas++
			}
			completed = completed || ev.Event == "response.completed"
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "jane.doe@example.com") || deltas < 10 || !completed {
			t.Fatalf("streamed %q in %d deltas (completed %v)", text.String(), deltas, completed)
		}
		sent := g.assertOnlyAliases(t, 1)[0]
		if !strings.Contains(sent, `"stream":true`) || !strings.Contains(sent, "<EMAIL_1_") {
			t.Errorf("sent %s", sent)
		}
		if m := stream.Meta(); m.Receipt == nil || m.ReceiptVerified == nil || !*m.ReceiptVerified {
			t.Fatalf("responses stream receipt %+v", m)
		}
	})

	t.Run("messages count_tokens", func(t *testing.T) {
		count, err := client.Messages.CountTokens(ctx, relay.MessageParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		sent := g.assertOnlyAliases(t, 1)[0]
		// The fake provider counts ceil(body bytes / 4) of what it received.
		if count.InputTokens != (len(sent)+3)/4 || strings.Contains(sent, "max_tokens") {
			t.Fatalf("count %d for a %d-byte body: %s", count.InputTokens, len(sent), sent)
		}
	})

	t.Run("models", func(t *testing.T) {
		list, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Data) == 0 {
			t.Fatalf("models %s", list.Raw)
		}
	})

	t.Run("attestation names relay-go and the gateway accepts it", func(t *testing.T) {
		id, version, sha := client.Engine()
		if id != "relay-go" || version == "" || len(sha) != 64 {
			t.Fatalf("engine %s %s %s", id, version, sha)
		}
	})

	t.Run("examples/quickstart runs as the README says", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "quickstart")
		if out, err := exec.Command("go", "build", "-o", bin, "./examples/quickstart").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "GATEWAY_URL="+g.url, "GATEWAY_KEY_FILE="+g.fundedKeyFile(t), "PRIVACY_RELAY_CONFIG_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("quickstart: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 4 || lines[0] != "Echo: Write to jane.doe@example.com" || !strings.Contains(lines[1], "<EMAIL_1_") ||
			lines[2] != "receipt verified: true" || lines[3] != lines[0] {
			t.Fatalf("quickstart printed:\n%s", out)
		}
		g.assertOnlyAliases(t, 2)
	})

	t.Run("examples/receipts runs as its comment says", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "receipts")
		if out, err := exec.Command("go", "build", "-o", bin, "./examples/receipts").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "GATEWAY_URL="+g.url, "GATEWAY_KEY_FILE="+g.fundedKeyFile(t), "PRIVACY_RELAY_CONFIG_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("receipts: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 4 || lines[0] != "receipt verified: true" || lines[1] != "countersignature verified: true" ||
			lines[2] != "in the transparency log: true" || !strings.HasSuffix(lines[3], "consistently: true") {
			t.Fatalf("receipts printed:\n%s", out)
		}
		g.assertOnlyAliases(t, 2)
	})

	t.Run("a webhook delivered by the gateway verifies; forged and replayed ones do not pass", func(t *testing.T) {
		keyFile := g.fundedKeyFile(t)
		token, _ := os.ReadFile(filepath.Join(g.dataDir, "admin-token"))
		portal := postJSON(t, g.url+"/api/admin/portal-tokens", map[string]any{"key_prefix": g.lastPrefix, "abilities": "webhooks.manage,webhooks.read"},
			map[string]string{"authorization": "Bearer " + strings.TrimSpace(string(token))})["token"].(string)
		wc, err := relay.NewClient(g.url, relay.WithAPIKeyFile(keyFile), relay.WithPortalToken(portal), relay.WithConfigDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		type delivery struct {
			body    []byte
			headers map[string]string
		}
		got := make(chan delivery, 4)
		receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			h := map[string]string{}
			for k := range r.Header {
				h[k] = r.Header.Get(k)
			}
			got <- delivery{b, h}
			w.WriteHeader(200)
		})}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go receiver.Serve(ln)
		defer receiver.Close()
		endpoint, err := wc.Webhooks.Endpoints.Create(ctx, "http://"+ln.Addr().String()+"/hooks", []string{"webhook.test"})
		if err != nil {
			t.Fatal(err)
		}
		if endpoint.ID == "" || endpoint.Secret == "" {
			t.Fatalf("endpoint %+v", endpoint)
		}
		if _, err := wc.Webhooks.Endpoints.Test(ctx, endpoint.ID); err != nil {
			t.Fatal(err)
		}
		var d delivery
		select {
		case d = <-got:
		case <-time.After(30 * time.Second):
			t.Fatal("no webhook delivery in 30 s")
		}
		v, err := relay.VerifyWebhook(d.body, d.headers, endpoint.Secret, 0, time.Time{})
		if err != nil || !v.OK {
			t.Fatalf("genuine delivery: %+v %v (%s)", v, err, d.body)
		}
		forged := bytes.Replace(d.body, []byte("webhook.test"), []byte("webhook.tesT"), 1)
		if v, err := relay.VerifyWebhook(forged, d.headers, endpoint.Secret, 0, time.Time{}); err != nil || v.OK || v.Code != "bad_signature" {
			t.Fatalf("forged delivery: %+v %v", v, err)
		}
		if v, err := relay.VerifyWebhook(d.body, d.headers, endpoint.Secret, time.Second, time.Now().Add(time.Hour)); err != nil || v.OK || v.Code != "stale_timestamp" {
			t.Fatalf("stale delivery: %+v %v", v, err)
		}
		var event struct {
			EventID string `json:"event_id"`
			Event   string `json:"event"`
		}
		_ = json.Unmarshal(d.body, &event)
		dedupe := relay.NewWebhookDeduper(0)
		if event.Event != "webhook.test" || event.EventID == "" || !dedupe.FirstTime(event.EventID) || dedupe.FirstTime(event.EventID) {
			t.Fatalf("event %+v", event)
		}
		// Without a portal token the call is refused locally.
		_, err = client.Webhooks.Endpoints.Create(ctx, "http://127.0.0.1:1/x", nil)
		var re *relay.Error
		if !errors.As(err, &re) || re.Code != "configuration_error" || re.Sent {
			t.Fatalf("no portal token: %v", err)
		}
		g.received(t)
	})

	t.Run("the REST capability set against the gateway", func(t *testing.T) {
		keyFile := g.fundedKeyFile(t)
		prefix := g.lastPrefix
		token, _ := os.ReadFile(filepath.Join(g.dataDir, "admin-token"))
		portal := postJSON(t, g.url+"/api/admin/portal-tokens", map[string]any{"key_prefix": prefix,
			"abilities": "ability:keys.read,ability:keys.write,ability:billing.read,ability:billing.write,webhooks.manage,webhooks.read"},
			map[string]string{"authorization": "Bearer " + strings.TrimSpace(string(token))})["token"].(string)
		rc, err := relay.NewClient(g.url, relay.WithAPIKeyFile(keyFile), relay.WithPortalToken(portal), relay.WithConfigDir(t.TempDir()), relay.WithNameModel("off"))
		if err != nil {
			t.Fatal(err)
		}
		// A relay call, so the organisation has a receipt and a usage record.
		first, err := rc.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		g.assertOnlyAliases(t, 1)

		self, err := rc.Self.Key(ctx)
		if err != nil || self.KeyPrefix != prefix || self.OrgID == "" {
			t.Fatalf("self key %+v %v", self, err)
		}
		bal, err := rc.Self.Balance(ctx)
		if err != nil || bal.BalanceMicros <= 0 || bal.BalanceMicros >= 10_000_000 {
			t.Fatalf("self balance after one call on $10: %+v %v", bal, err)
		}
		usage, err := rc.Self.Usage(ctx, relay.PageParams{})
		if err != nil || len(usage.Records) != 1 || usage.Records[0].Model != "local-chat" {
			t.Fatalf("self usage %+v %v", usage, err)
		}

		// Keys: issue, list, change, rotate, revoke.
		name := "go-sdk-e2e"
		issued, err := rc.Keys.Create(ctx, relay.KeyParams{Name: &name, Permissions: []string{"completions"}})
		if err != nil || !strings.HasPrefix(issued.APIKey, "svc_") || issued.OrgID != self.OrgID {
			t.Fatalf("keys create %+v %v", issued, err)
		}
		days := 30
		changed, err := rc.Keys.Update(ctx, issued.ID, relay.KeyParams{RotationDays: &days})
		if err != nil || changed.RotationDays == nil || *changed.RotationDays != 30 || changed.Status != "active" {
			t.Fatalf("keys update %+v %v", changed, err)
		}
		rotated, err := rc.Keys.Rotate(ctx, issued.ID)
		if err != nil || rotated.Replaces != issued.ID || rotated.APIKey == issued.APIKey {
			t.Fatalf("keys rotate %+v %v", rotated, err)
		}
		revoked, err := rc.Keys.Revoke(ctx, rotated.ID)
		if err != nil || revoked.Status != "revoked" {
			t.Fatalf("keys revoke %+v %v", revoked, err)
		}
		keys, err := rc.Keys.List(ctx, "")
		status := map[string]string{}
		for _, k := range keys {
			status[k.ID] = k.Status
		}
		if err != nil || status[issued.ID] != "rotated" || status[rotated.ID] != "revoked" {
			t.Fatalf("keys list %v %v", status, err)
		}

		// Receipts: the stored receipt of the call, verified offline and online, and its transparency proof.
		page, err := rc.Receipts.List(ctx, relay.ReceiptListParams{Limit: 10})
		if err != nil || len(page.Receipts) != 1 || page.Receipts[0].Claims.Model != "local-chat" {
			t.Fatalf("receipts list %+v %v", page, err)
		}
		stored, err := rc.Receipts.Get(ctx, page.Receipts[0].Jti)
		if err != nil || !bytes.Equal(stored.Raw, page.Receipts[0].Raw) {
			t.Fatalf("receipts get %s %v", stored.Raw, err)
		}
		if v, err := rc.VerifyReceipt(ctx, string(stored.Raw)); err != nil || !v.Valid {
			t.Fatalf("offline verdict %+v %v", v, err)
		}
		if v, err := rc.Receipts.VerifyOnline(ctx, string(stored.Raw)); err != nil || !v.Valid {
			t.Fatalf("online verdict %+v %v", v, err)
		}
		tampered := bytes.Replace(stored.Raw, []byte(`"local-chat"`), []byte(`"local-chaT"`), 1)
		if v, err := rc.Receipts.VerifyOnline(ctx, string(tampered)); err != nil || v.Valid || v.Reason == nil {
			t.Fatalf("online verdict on a tampered receipt %+v %v", v, err)
		}
		sth, err := rc.Receipts.SignedTreeHead(ctx)
		if err != nil || sth.TreeSize < 1 || sth.RootHash == "" {
			t.Fatalf("sth %+v %v", sth, err)
		}
		proof, err := rc.Receipts.InclusionProof(ctx, stored.Jti)
		if err != nil || proof.TreeSize < 1 || proof.LeafHash == "" {
			t.Fatalf("inclusion proof %+v %v", proof, err)
		}
		// The proofs checked on this device: the call's receipt-v2 is in the log, and the log only grows.
		if v, err := rc.Receipts.VerifyInclusion(ctx, first.Meta.Receipt); err != nil || !v.Valid {
			t.Fatalf("inclusion verdict %+v %v", v, err)
		}
		forged := map[string]any{}
		for k, v := range first.Meta.Receipt {
			forged[k] = v
		}
		forged["output_tokens"] = first.Meta.Receipt["output_tokens"].(float64) + 1
		if v, err := rc.Receipts.VerifyInclusion(ctx, forged); err != nil || v.Valid || v.Reason == nil {
			t.Fatalf("inclusion verdict for a changed receipt %+v %v", v, err)
		}
		if _, err := rc.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: "hello"}}}); err != nil {
			t.Fatal(err)
		}
		g.received(t)
		grown, newHead, err := rc.Receipts.VerifyConsistency(ctx, sth)
		if err != nil || !grown.Valid || newHead.TreeSize <= sth.TreeSize {
			t.Fatalf("consistency verdict %+v %v (heads %d -> %+v)", grown, err, sth.TreeSize, newHead)
		}

		// Billing: balance, a dev checkout completed, the ledger shows the credit and the debit.
		before, err := rc.Billing.Balance(ctx)
		if err != nil || before.BalanceMicros >= bal.BalanceMicros {
			t.Fatalf("billing balance %+v %v (self %+v)", before, err, bal)
		}
		chk, err := rc.Billing.TopUp(ctx, "5.00")
		if err != nil || chk.CheckoutID == "" || chk.AmountMicros != 5_000_000 {
			t.Fatalf("top up %+v %v", chk, err)
		}
		if done, err := rc.Billing.CompleteDevCheckout(ctx, chk.CheckoutID); err != nil || !done.Credited {
			t.Fatalf("complete checkout %+v %v", done, err)
		}
		after, err := rc.Billing.Balance(ctx)
		if err != nil || after.BalanceMicros != before.BalanceMicros+5_000_000 {
			t.Fatalf("balance after top-up %+v %v", after, err)
		}
		ledger, err := rc.Billing.Ledger(ctx, relay.PageParams{Limit: 50})
		if err != nil || len(ledger.Entries) < 3 {
			t.Fatalf("ledger %+v %v", ledger, err)
		}
		if u, err := rc.Billing.Usage(ctx, relay.PageParams{}); err != nil || len(u.Records) != 2 {
			t.Fatalf("billing usage %+v %v", u, err)
		}

		// Webhooks: list, change, rotate the secret, see the delivery of a test event, replay it.
		ep, err := rc.Webhooks.Endpoints.Create(ctx, "http://127.0.0.1:9/unreachable", []string{"webhook.test"})
		if err != nil {
			t.Fatal(err)
		}
		eps, err := rc.Webhooks.Endpoints.List(ctx)
		if err != nil || len(eps) != 1 || eps[0].ID != ep.ID || eps[0].Secret != "" {
			t.Fatalf("endpoints %+v %v", eps, err)
		}
		upd, err := rc.Webhooks.Endpoints.Update(ctx, ep.ID, relay.WebhookEndpointUpdate{Events: []string{"webhook.test", "receipt.signed"}})
		if err != nil || len(upd.Events) != 2 {
			t.Fatalf("endpoint update %+v %v", upd, err)
		}
		rot, err := rc.Webhooks.Endpoints.RotateSecret(ctx, ep.ID)
		if err != nil || rot.Secret == "" || rot.Secret == ep.Secret {
			t.Fatalf("rotate secret %+v %v", rot, err)
		}
		queued, err := rc.Webhooks.Endpoints.Test(ctx, ep.ID)
		if err != nil || queued.Event != "webhook.test" || queued.EndpointID != ep.ID {
			t.Fatalf("test event %+v %v", queued, err)
		}
		got, err := rc.Webhooks.Deliveries.Get(ctx, queued.ID)
		if err != nil || got.EventID != queued.EventID || len(got.Payload) == 0 {
			t.Fatalf("delivery %+v %v", got, err)
		}
		replay, err := rc.Webhooks.Deliveries.Replay(ctx, queued.ID)
		if err != nil || replay.ReplayOf == nil || *replay.ReplayOf != queued.ID || !strings.HasPrefix(replay.EventID, "replay-") {
			t.Fatalf("replay %+v %v", replay, err)
		}
		list, err := rc.Webhooks.Deliveries.List(ctx, relay.WebhookDeliveryListParams{EndpointID: string(ep.ID)})
		if err != nil || len(list) < 2 {
			t.Fatalf("deliveries %+v %v", list, err)
		}
		if err := rc.Webhooks.Endpoints.Delete(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		_, err = rc.Webhooks.Endpoints.Get(ctx, ep.ID)
		var re *relay.Error
		if !errors.As(err, &re) || re.Status != 404 {
			t.Fatalf("a deleted endpoint: %v", err)
		}

		// Self-service: a free key, no credential.
		anon, err := relay.NewClient(g.url, relay.WithConfigDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		free, err := anon.CreateSelfServiceKey(ctx, relay.SelfServiceKeyParams{}, relay.CallOptions{})
		if err != nil || !strings.HasPrefix(free.APIKey, "svc_") || free.Tier != "free" {
			t.Fatalf("self-service key %+v %v", free, err)
		}
		g.received(t)
	})

	t.Run("a receipt signed by a key rotated in after the client cached the JWKS verifies", func(t *testing.T) {
		token, _ := os.ReadFile(filepath.Join(g.dataDir, "admin-token"))
		rotated := postJSON(t, g.url+"/api/admin/receipts/keys/rotate", map[string]any{},
			map[string]string{"authorization": "Bearer " + strings.TrimSpace(string(token))})
		answer, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		g.assertOnlyAliases(t, 1)
		if answer.Meta.Receipt["kid"] != rotated["kid"] || answer.Meta.ReceiptVerified == nil || !*answer.Meta.ReceiptVerified {
			t.Fatalf("receipt kid %v (rotated in %v): %+v", answer.Meta.Receipt["kid"], rotated["kid"], answer.Meta.ReceiptVerification)
		}
	})

	t.Run("a gateway error is a typed *relay.Error", func(t *testing.T) {
		bad, err := relay.NewClient(g.url, relay.WithAPIKey("svc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), relay.WithConfigDir(t.TempDir()), relay.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: "hi"}}})
		var re *relay.Error
		if !errors.As(err, &re) || re.Status != 401 || re.Code == "" || !re.Sent {
			t.Fatalf("want a 401 *relay.Error, got %v (%s)", err, fmt.Sprint(re))
		}
		g.received(t)
	})
}
