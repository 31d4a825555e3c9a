package engine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestABIAndInfo(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	info, err := EngineInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != "relay-rs" || len(info.SHA256) != 64 || info.ABIVersion != ABIVersion {
		t.Fatalf("engine info %+v", info)
	}
}

func asEngineError(t *testing.T, err error, code string, number int) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *engine.Error %s, got %v", code, err)
	}
	if e.Code != code || e.Number != number || e.Message == "" {
		t.Fatalf("want %s (%d) with a message, got %+v", code, number, e)
	}
	return e
}

func TestErrorsAreMapped(t *testing.T) {
	asEngineError(t, tokeniseNullBody(), "null_argument", 1)
	_, err := TokeniseRequest("chat.completions", "{not json", nil)
	asEngineError(t, err, "invalid_json", 3)
	_, err = TokeniseRequest("chat.completions", `{"model":"m","messages":"x"}`, nil)
	asEngineError(t, err, "invalid_request", 5)
	_, err = TokeniseRequest("no.such.route", `{}`, nil)
	asEngineError(t, err, "invalid_argument", 4)
	_, err = TokeniseRequest("chat.completions", `{"model":"m","messages":[]}`, map[string]any{"no_such_option": 1})
	asEngineError(t, err, "invalid_argument", 4)
	_, err = VerifyReceipt("x", "not a jwks", nil)
	asEngineError(t, err, "invalid_json", 3)
	_, err = BuildAttestation(map[string]any{"route": "chat.completions", "body": "{}"}, `{"kty":"oct"}`)
	if err == nil {
		t.Fatal("a non-P-256 device key was accepted")
	}
	asEngineError(t, debugPanic(), "internal_error", 100)
	// The library is still usable after a panic was caught inside it.
	if _, err := Canonicalize(`{"b":1,"a":2}`); err != nil {
		t.Fatal(err)
	}
}

func TestUnsupportedFieldCarriesPath(t *testing.T) {
	_, err := TokeniseRequest("chat.completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"x_invented":"a"}`, map[string]any{"names": "off"})
	e := asEngineError(t, err, "unsupported_field", 6)
	if e.Details["path"] != "/x_invented" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestDetokeniserLifecycle(t *testing.T) {
	d, err := NewDetokeniser(`[["<EMAIL_1_ynha>","jane.doe@example.com"]]`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Push("Wrote to <EMAIL_1_")
	if err != nil || out != "Wrote to " {
		t.Fatalf("push: %q %v", out, err)
	}
	out, err = d.Push("ynha> today")
	if err != nil || out != "jane.doe@example.com today" {
		t.Fatalf("push: %q %v", out, err)
	}
	if _, err := d.Push("<EMA"); err != nil {
		t.Fatal(err)
	}
	rest, err := d.Finish()
	if err != nil || rest != "<EMA" {
		t.Fatalf("finish: %q %v", rest, err)
	}
	d.Close()
	d.Close() // twice is fine
	if _, err := d.Push("x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("push after close: %v", err)
	}
	if _, err := d.Finish(); !errors.Is(err, ErrClosed) {
		t.Fatalf("finish after close: %v", err)
	}
	_, err = NewDetokeniser("not json")
	asEngineError(t, err, "invalid_json", 3)
	// Many handles opened and closed: no leak of handles visible as a failure, finalizers tolerate closed ones.
	for i := 0; i < 1000; i++ {
		h, err := NewDetokeniser(`{}`)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			h.Close()
		}
	}
}

func TestTokeniseRequestAndAttestation(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"Mail jane.doe@example.com please"}]}`
	tr, err := TokeniseRequest("chat.completions", body, map[string]any{"names": "off"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tr.BodyText, "jane.doe") || len(tr.Map) != 1 || tr.Map[0][1] != "jane.doe@example.com" || tr.DetectorsFired["EMAIL"] != 1 {
		t.Fatalf("tokenised %+v", tr)
	}
	key, err := GenerateDeviceKey()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := EngineInfo()
	att, err := BuildAttestation(map[string]any{"route": "chat.completions", "body": tr.BodyText, "body_is_canonical": true,
		"detectors_fired": tr.DetectorsFired, "engine": map[string]any{"id": "relay-go", "version": "0.1.0", "sha256": info.SHA256}}, string(key.PrivateJWK))
	if err != nil {
		t.Fatal(err)
	}
	if att.EngineHeader != "relay-go/0.1.0" || att.Header == "" {
		t.Fatalf("attestation %+v", att)
	}
}

// ---- sdks/vectors through the C ABI ------------------------------------------------------------------------------

func vectors(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

func TestVectorsJCS(t *testing.T) {
	var f struct {
		Cases []struct{ Name, Input, Canonical string }
	}
	vectors(t, "jcs.json", &f)
	for _, c := range f.Cases {
		got, err := Canonicalize(c.Input)
		if err != nil || got != c.Canonical {
			t.Errorf("%s: %q %v, want %q", c.Name, got, err, c.Canonical)
		}
	}
}

func TestVectorsAliases(t *testing.T) {
	var f struct {
		RequestSecretHex string `json:"request_secret_hex"`
		StableSecretHex  string `json:"stable_secret_hex"`
		Tokenise         []struct {
			Text, Output   string
			Map            [][2]string
			DetectorsFired map[string]int `json:"detectors_fired"`
		}
		TokeniseStable []struct {
			Text, Output string
			Map          [][2]string
		} `json:"tokenise_stable"`
		Streams []struct {
			Name, Flush string
			Chunks      []string
			Outputs     []string
			Map         json.RawMessage
		}
	}
	vectors(t, "aliases.json", &f)
	for _, c := range f.Tokenise {
		got, err := TokeniseText(c.Text, map[string]any{"names": "off", "secret_hex": f.RequestSecretHex})
		if err != nil || got.Text != c.Output || !reflect.DeepEqual(got.Map, c.Map) || !reflect.DeepEqual(got.DetectorsFired, c.DetectorsFired) {
			t.Errorf("tokenise %q: %+v %v", c.Text, got, err)
		}
	}
	for _, c := range f.TokeniseStable {
		got, err := TokeniseText(c.Text, map[string]any{"names": "off", "secret_hex": f.RequestSecretHex, "stable_alias_secret_hex": f.StableSecretHex})
		if err != nil || got.Text != c.Output || !reflect.DeepEqual(got.Map, c.Map) {
			t.Errorf("tokenise_stable %q: %+v %v", c.Text, got, err)
		}
	}
	for _, c := range f.Streams {
		d, err := NewDetokeniser(string(c.Map))
		if err != nil {
			t.Fatal(err)
		}
		for i, chunk := range c.Chunks {
			out, err := d.Push(chunk)
			if err != nil || out != c.Outputs[i] {
				t.Errorf("%s push %d: %q %v, want %q", c.Name, i, out, err, c.Outputs[i])
			}
		}
		rest, err := d.Finish()
		if err != nil || rest != c.Flush {
			t.Errorf("%s flush: %q %v, want %q", c.Name, rest, err, c.Flush)
		}
		d.Close()
	}
	if len(f.Tokenise) == 0 || len(f.Streams) == 0 {
		t.Fatal("no alias vectors read")
	}
}

func TestVectorsWebhooks(t *testing.T) {
	var f struct {
		Verify []struct {
			Name, Body, Secret string
			Headers            map[string]string
			NowSeconds         int64  `json:"now_seconds"`
			ToleranceSeconds   *int64 `json:"tolerance_seconds"`
			Expected           struct {
				OK   bool   `json:"ok"`
				Code string `json:"code"`
			}
		}
	}
	vectors(t, "webhooks.json", &f)
	for _, c := range f.Verify {
		h, _ := json.Marshal(c.Headers)
		opts := map[string]any{"now_seconds": c.NowSeconds}
		if c.ToleranceSeconds != nil {
			opts["tolerance_seconds"] = *c.ToleranceSeconds
		}
		text, err := VerifyWebhook([]byte(c.Body), string(h), c.Secret, opts)
		var got struct {
			OK   bool   `json:"ok"`
			Code string `json:"code"`
		}
		if err == nil {
			err = json.Unmarshal([]byte(text), &got)
		}
		if err != nil || got.OK != c.Expected.OK || got.Code != c.Expected.Code {
			t.Errorf("%s: %s %v, want %+v", c.Name, text, err, c.Expected)
		}
	}
}

func TestVectorsReceipts(t *testing.T) {
	var f struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name        string
			Input       json.RawMessage
			Previous    json.RawMessage
			Attestation json.RawMessage
			NowSeconds  int64 `json:"now_seconds"`
			Expected    json.RawMessage
		}
	}
	vectors(t, "receipts.json", &f)
	for _, c := range f.Cases {
		input := string(c.Input)
		var s string
		if json.Unmarshal(c.Input, &s) == nil {
			input = s // header value or JSON text
		}
		opts := map[string]any{"now_seconds": c.NowSeconds}
		if c.Previous != nil {
			opts["previous"] = c.Previous
		}
		if c.Attestation != nil {
			opts["attestation"] = c.Attestation
		}
		text, err := VerifyReceipt(input, string(f.JWKS), opts)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var got, want any
		_ = json.Unmarshal([]byte(text), &got)
		_ = json.Unmarshal(c.Expected, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, text, c.Expected)
		}
	}
}

// BenchmarkTokeniseRequest: one chat body with three values, names on, through cgo (JSON in and out).
func BenchmarkTokeniseRequest(b *testing.B) {
	body := `{"model":"m","messages":[{"role":"user","content":"Write to jane.doe@example.com and call +44 20 7946 0958 about IBAN DE89 3704 0044 0532 0130 00, Maria Garcia."}]}`
	for i := 0; i < b.N; i++ {
		if _, err := TokeniseRequest("chat.completions", body, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalizeSmall: the cost of one cgo round trip with a tiny JSON document.
func BenchmarkCanonicalizeSmall(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Canonicalize(`{"b":1,"a":2}`); err != nil {
			b.Fatal(err)
		}
	}
}

func TestVectorsAttestationBuild(t *testing.T) {
	var f struct {
		DeviceKey struct {
			PrivateJWK json.RawMessage `json:"private_jwk"`
		} `json:"device_key"`
		Build []struct {
			Name     string
			Input    map[string]any
			Envelope json.RawMessage
			Header   string
		}
	}
	vectors(t, "attestation.json", &f)
	for _, c := range f.Build {
		in := map[string]any{"deterministic": true}
		for k, v := range c.Input {
			in[k] = v
		}
		got, err := BuildAttestation(in, string(f.DeviceKey.PrivateJWK))
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var ge, we any
		_ = json.Unmarshal(got.Envelope, &ge)
		_ = json.Unmarshal(c.Envelope, &we)
		if got.Header != c.Header || !reflect.DeepEqual(ge, we) {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got.Envelope, c.Envelope)
		}
	}
	if len(f.Build) == 0 {
		t.Fatal("no build vectors")
	}
}

// TestVectorsReceiptChains compares every member of expected (valid, verified, break with its kind, gaps).
func TestVectorsReceiptChains(t *testing.T) {
	var f struct {
		JWKS   json.RawMessage `json:"jwks"`
		Chains []struct {
			Name       string
			Receipts   json.RawMessage
			AllowGaps  *bool `json:"allow_gaps"`
			NowSeconds int64 `json:"now_seconds"`
			Expected   map[string]any
		}
	}
	vectors(t, "receipts.json", &f)
	for _, c := range f.Chains {
		opts := map[string]any{"now_seconds": c.NowSeconds}
		if c.AllowGaps != nil {
			opts["allow_gaps"] = *c.AllowGaps
		}
		text, err := VerifyChain(string(c.Receipts), string(f.JWKS), opts)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var got map[string]any
		_ = json.Unmarshal([]byte(text), &got)
		for k, want := range c.Expected {
			g := got[k]
			if k == "break" && g != nil && want != nil {
				gb, wb := g.(map[string]any), want.(map[string]any)
				sub := map[string]any{}
				for bk := range wb {
					sub[bk] = gb[bk]
				}
				g = sub
			}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("%s: %s = %v, want %v", c.Name, k, g, want)
			}
		}
	}
	if len(f.Chains) == 0 {
		t.Fatal("no chains")
	}
}

// TestVectorsEgressPolicy: every case of egress-policy-cases.json through pr_tokenise_request: the refusal exactly,
// or the exact bytes sent, passthrough, detectors_fired and map; never_sent values absent.
func TestVectorsEgressPolicy(t *testing.T) {
	var f struct {
		Cases []struct {
			Name      string
			Route     string
			Body      json.RawMessage
			Options   map[string]any
			NeverSent []string `json:"never_sent"`
			Expected  struct {
				Refusal        map[string]any  `json:"refusal"`
				BodyJCS        string          `json:"body_jcs"`
				Passthrough    json.RawMessage `json:"passthrough"`
				DetectorsFired map[string]int  `json:"detectors_fired"`
				Map            [][2]string     `json:"map"`
			}
		}
	}
	vectors(t, "egress-policy-cases.json", &f)
	for _, c := range f.Cases {
		got, err := TokeniseRequest(c.Route, string(c.Body), c.Options)
		if c.Expected.Refusal != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s: want refusal %v, got %v", c.Name, c.Expected.Refusal, err)
				continue
			}
			gotRefusal := map[string]any{"code": e.Code}
			for k := range c.Expected.Refusal {
				if k != "code" {
					gotRefusal[k] = e.Details[k]
				}
			}
			if !reflect.DeepEqual(gotRefusal, c.Expected.Refusal) {
				t.Errorf("%s: refusal %v, want %v", c.Name, gotRefusal, c.Expected.Refusal)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var gp, wp any
		_ = json.Unmarshal(got.Passthrough, &gp)
		_ = json.Unmarshal(c.Expected.Passthrough, &wp)
		if got.BodyText != c.Expected.BodyJCS || !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(got.DetectorsFired, c.Expected.DetectorsFired) ||
			!(len(got.Map) == 0 && len(c.Expected.Map) == 0 || reflect.DeepEqual(got.Map, c.Expected.Map)) {
			t.Errorf("%s:\n got %s %s %v %v\nwant %s %s %v %v", c.Name, got.BodyText, got.Passthrough, got.DetectorsFired, got.Map,
				c.Expected.BodyJCS, c.Expected.Passthrough, c.Expected.DetectorsFired, c.Expected.Map)
		}
		for _, v := range c.NeverSent {
			if strings.Contains(got.BodyText, v) {
				t.Errorf("%s: %q was sent", c.Name, v)
			}
		}
	}
	if len(f.Cases) < 30 {
		t.Fatalf("only %d cases", len(f.Cases))
	}
}
