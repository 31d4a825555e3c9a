package engine

// The vector files that earlier ran only in the other SDKs, now through the C ABI: sha256.json, merkle-proofs.json,
// transparency.json, tokeniser-spans.json, tokeniser-names.json, name-model.json, attestation.json (verify) and webhooks.json (sign).

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func sameJSON(t *testing.T, name, got string, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: the engine answered %q: %v", name, got, err)
	}
	_ = json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func unhex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVectorsSHA256(t *testing.T) {
	var f struct {
		Text []struct {
			Text    string `json:"text"`
			UTF8Hex string `json:"utf8_hex"`
			SHA256  string `json:"sha256"`
		} `json:"text"`
		JSONBody []struct {
			Name   string `json:"name"`
			Body   string `json:"body"`
			SHA256 string `json:"sha256"`
		} `json:"json_body"`
		Merkle struct {
			EmptyTreeRoot string `json:"empty_tree_root"`
			Leaf          []struct {
				DataHex  string `json:"data_hex"`
				LeafHash string `json:"leaf_hash"`
			} `json:"leaf"`
			Node []struct {
				LeftHex  string `json:"left_hex"`
				RightHex string `json:"right_hex"`
				NodeHash string `json:"node_hash"`
			} `json:"node"`
		} `json:"merkle"`
	}
	vectors(t, "sha256.json", &f)
	check := func(name, kind string, data []byte, want string) {
		got, err := Hash(kind, data)
		if err != nil || got != want {
			t.Errorf("%s: %s = %q %v, want %s", name, kind, got, err, want)
		}
	}
	for _, c := range f.Text {
		if hex.EncodeToString([]byte(c.Text)) != c.UTF8Hex {
			t.Errorf("%q is not its utf8_hex", c.Text)
		}
		check(c.Text, "sha256", []byte(c.Text), c.SHA256)
	}
	for _, c := range f.JSONBody {
		check(c.Name, "json_body_sha256", []byte(c.Body), c.SHA256)
	}
	check("empty tree root", "sha256", nil, f.Merkle.EmptyTreeRoot)
	for _, c := range f.Merkle.Leaf {
		check(c.DataHex, "merkle_leaf", unhex(t, c.DataHex), c.LeafHash)
	}
	for _, c := range f.Merkle.Node {
		check(c.LeftHex, "merkle_node", append(unhex(t, c.LeftHex), unhex(t, c.RightHex)...), c.NodeHash)
	}
	// Bad input is a typed error, not a hash.
	if _, err := Hash("merkle_node", make([]byte, 63)); err == nil || err.(*Error).Code != "invalid_argument" {
		t.Errorf("a 63-byte node: %v", err)
	}
	if _, err := Hash("json_body_sha256", []byte("{not json")); err == nil || err.(*Error).Code != "invalid_json" {
		t.Errorf("a body that is not JSON: %v", err)
	}
	if _, err := Hash("md5", nil); err == nil || err.(*Error).Code != "invalid_argument" {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestVectorsMerkleProofs(t *testing.T) {
	var f struct {
		ReferenceTree struct {
			Leaves     []string `json:"leaves"`
			LeafHashes []string `json:"leaf_hashes"`
			Roots      []struct {
				TreeSize int    `json:"tree_size"`
				RootHash string `json:"root_hash"`
			} `json:"roots"`
		} `json:"reference_tree"`
		Inclusion   []map[string]any `json:"inclusion"`
		Consistency []map[string]any `json:"consistency"`
	}
	vectors(t, "merkle-proofs.json", &f)
	for i, leaf := range f.ReferenceTree.Leaves {
		if got, err := Hash("merkle_leaf", unhex(t, leaf)); err != nil || got != f.ReferenceTree.LeafHashes[i] {
			t.Errorf("leaf %d: %s %v", i, got, err)
		}
	}
	for kind, cases := range map[string][]map[string]any{"inclusion": f.Inclusion, "consistency": f.Consistency} {
		if len(cases) < 100 {
			t.Fatalf("%d %s cases", len(cases), kind)
		}
		for _, c := range cases {
			got, err := VerifyMerkleProof(kind, c)
			if err != nil || got != c["valid"].(bool) {
				t.Errorf("%s %s: %v %v, want %v", kind, c["name"], got, err, c["valid"])
			}
		}
	}
	if _, err := VerifyMerkleProof("audit", map[string]any{}); err == nil || err.(*Error).Code != "invalid_argument" {
		t.Errorf("an unknown kind: %v", err)
	}
}

func TestVectorsTransparency(t *testing.T) {
	var f struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name     string
			Proof    json.RawMessage
			STH      json.RawMessage
			Receipt  json.RawMessage
			Expected json.RawMessage
		}
		Consistency []struct {
			Name     string
			Proof    json.RawMessage
			OldHead  json.RawMessage `json:"old_head"`
			NewHead  json.RawMessage `json:"new_head"`
			Expected json.RawMessage
		}
	}
	vectors(t, "transparency.json", &f)
	for _, c := range f.Cases {
		opts := map[string]any{}
		if c.Receipt != nil {
			opts["receipt"] = c.Receipt
		}
		got, err := VerifyInclusionProof(string(c.Proof), string(c.STH), string(f.JWKS), opts)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		sameJSON(t, c.Name, got, c.Expected)
	}
	for _, c := range f.Consistency {
		opts := map[string]any{}
		if c.NewHead != nil {
			opts["new_head"] = c.NewHead
		}
		got, err := VerifyConsistencyProof(string(c.Proof), string(c.OldHead), string(f.JWKS), opts)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		sameJSON(t, c.Name, got, c.Expected)
	}
	if len(f.Cases) == 0 || len(f.Consistency) == 0 {
		t.Fatal("no transparency cases")
	}
}

// spansOf checks a tokeniser vector file (tokeniser-spans.json: names off; tokeniser-names.json: the built-in name
// model on) through the engine's C ABI with the file's engine_settings.
func spansOf(t *testing.T, file string) {
	var f struct {
		EngineSettings map[string]any `json:"engine_settings"`
		Cases          []struct {
			Language string `json:"language"`
			Text     string `json:"text"`
			Spans    []struct {
				Start int    `json:"start"`
				End   int    `json:"end"`
				Type  string `json:"type"`
				Value string `json:"value"`
			} `json:"spans"`
		} `json:"cases"`
	}
	vectors(t, file, &f)
	for _, c := range f.Cases {
		spans, err := DetectSpans(c.Text, f.EngineSettings)
		if err != nil {
			t.Fatalf("%s: %v", c.Language, err)
		}
		var got, want []string
		for _, s := range spans {
			got = append(got, fmt.Sprintf("%s %q %d-%d", s.Type, s.Value, s.Start, s.End))
			if c.Text[s.ByteStart:s.ByteEnd] != s.Value {
				t.Errorf("%s: byte offsets %d-%d are not %q", c.Language, s.ByteStart, s.ByteEnd, s.Value)
			}
		}
		for _, s := range c.Spans {
			want = append(want, fmt.Sprintf("%s %q %d-%d", s.Type, s.Value, s.Start, s.End))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q:\n got %v\nwant %v", c.Language, c.Text, got, want)
		}
	}
}

func TestVectorsTokeniserSpans(t *testing.T) { spansOf(t, "tokeniser-spans.json") }

func TestVectorsTokeniserNames(t *testing.T) { spansOf(t, "tokeniser-names.json") }

// tokeniser-large.json: a short unit repeated up to millions of times, then a real value. The value after the run
// must be found (PCRE2's limit once ended the search there) and the engine must answer, not fail.
func TestVectorsTokeniserLarge(t *testing.T) {
	var f struct {
		EngineSettings map[string]any `json:"engine_settings"`
		Cases          []struct {
			Name  string `json:"name"`
			Unit  string `json:"unit"`
			Times int    `json:"times"`
			Tail  string `json:"tail"`
			Spans []struct {
				Start int    `json:"start"`
				End   int    `json:"end"`
				Type  string `json:"type"`
				Value string `json:"value"`
			} `json:"spans"`
		} `json:"cases"`
	}
	vectors(t, "tokeniser-large.json", &f)
	for _, c := range f.Cases {
		text := strings.Repeat(c.Unit, c.Times) + c.Tail
		spans, err := DetectSpans(text, f.EngineSettings)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var got, want []string
		for _, s := range spans {
			got = append(got, fmt.Sprintf("%s %q %d-%d", s.Type, s.Value, s.Start, s.End))
		}
		for _, s := range c.Spans {
			want = append(want, fmt.Sprintf("%s %q %d-%d", s.Type, s.Value, s.Start, s.End))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", c.Name, got, want)
		}
	}
}

// The builtin name model compiled into the engine is name-model.json's lexicon: as many distinct given names and
// surnames as its faker, compromise and frequent lists hold, and faker's place and calendar words.
func TestVectorsNameModelIsTheEnginesLexicon(t *testing.T) {
	var m struct {
		Lexicon map[string]map[string]any `json:"lexicon"`
	}
	vectors(t, "name-model.json", &m)
	distinct := func(key string, sources ...string) int {
		seen := map[string]bool{}
		for _, s := range sources {
			list, _ := m.Lexicon[s][key].([]any)
			for _, w := range list {
				seen[w.(string)] = true
			}
		}
		return len(seen)
	}
	info, err := EngineInfo()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"given_names": distinct("given", "faker", "compromise", "frequent"), "surnames": distinct("surnames", "faker", "compromise", "frequent"),
		"place_words": distinct("places", "faker"), "calendar_words": distinct("calendar", "faker")}
	for k, v := range want {
		if got := info.Gazetteer[k]; got != v {
			t.Errorf("gazetteer %s: engine %d, name-model.json %d", k, got, v)
		}
	}
}

func TestVectorsAttestationVerify(t *testing.T) {
	var f struct {
		Verify []struct {
			Name       string
			Header     string
			NowSeconds int64 `json:"now_seconds"`
			Expected   struct {
				Offline json.RawMessage `json:"offline"`
			}
		}
	}
	vectors(t, "attestation.json", &f)
	for _, c := range f.Verify {
		got, err := VerifyReceipt(c.Header, `{"keys":[]}`, map[string]any{"now_seconds": c.NowSeconds})
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var verdict struct {
			Valid  bool    `json:"valid"`
			Reason *string `json:"reason"`
		}
		_ = json.Unmarshal([]byte(got), &verdict)
		out, _ := json.Marshal(verdict)
		sameJSON(t, c.Name, string(out), c.Expected.Offline)
	}
	if len(f.Verify) == 0 {
		t.Fatal("no attestation verify cases")
	}
}

func TestVectorsWebhooksSign(t *testing.T) {
	var f struct {
		Secret string `json:"secret"`
		Sign   []struct {
			Payload   json.RawMessage `json:"payload"`
			Body      string          `json:"body"`
			Timestamp int64           `json:"timestamp"`
			V1        string          `json:"v1"`
			V0        string          `json:"v0"`
		} `json:"sign"`
	}
	vectors(t, "webhooks.json", &f)
	for _, c := range f.Sign {
		if got, err := SignWebhook("v1", c.Body, f.Secret, map[string]any{"timestamp": c.Timestamp}); err != nil || got != c.V1 {
			t.Errorf("v1: %q %v, want %q", got, err, c.V1)
		}
		if got, err := SignWebhook("v0", string(c.Payload), f.Secret, nil); err != nil || got != c.V0 {
			t.Errorf("v0: %q %v, want %q", got, err, c.V0)
		}
	}
	if _, err := SignWebhook("v1", "{}", f.Secret, nil); err == nil || err.(*Error).Code != "invalid_argument" {
		t.Errorf("v1 without a timestamp: %v", err)
	}
	if _, err := SignWebhook("v0", "{not json", f.Secret, nil); err == nil || err.(*Error).Code != "invalid_json" {
		t.Errorf("v0 of a body that is not JSON: %v", err)
	}
}

// The library was built from this repository's egress policy (sdks/vectors/egress-policy.json, byte for byte):
// a library built from another policy would tokenise by other rules.
func TestVectorsEgressPolicyIsTheOneCompiledIn(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "vectors", "egress-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	info, err := EngineInfo()
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := Hash("sha256", raw)
	if info.EgressPolicy.SHA256 != sum || info.EgressPolicy.Version != doc.Version || doc.Version == 0 {
		t.Fatalf("engine policy %+v, file version %d sha256 %s", info.EgressPolicy, doc.Version, sum)
	}
}

// Every file of sdks/vectors has a test here (a new file without one fails this test).
func TestEveryVectorFileIsRead(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "..", "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			found = append(found, e.Name())
		}
	}
	sort.Strings(found)
	read := []string{"aliases.json", "attestation.json", "egress-policy-cases.json", "egress-policy.json", "jcs.json", "merkle-proofs.json",
		"name-model.json", "receipts.json", "sha256.json", "tokeniser-large.json", "tokeniser-names.json", "tokeniser-spans.json", "transparency.json", "webhooks.json"}
	if !reflect.DeepEqual(found, read) {
		t.Fatalf("vector files %v; the Go tests read %v", found, read)
	}
}

func TestVectorsAliasTagsAndShape(t *testing.T) {
	var f struct {
		RequestSecretHex string `json:"request_secret_hex"`
		StableSecretHex  string `json:"stable_secret_hex"`
		Tags             map[string][]struct {
			Message string `json:"message"`
			HMAC    string `json:"hmac_sha256"`
			Tag     string `json:"tag"`
		} `json:"tags"`
		IsAlias []struct {
			Text  string `json:"text"`
			Alias bool   `json:"alias"`
		} `json:"is_alias"`
	}
	vectors(t, "aliases.json", &f)
	for group, kind := range map[string]string{"per_request": "request", "stable": "stable"} {
		secret := f.RequestSecretHex
		if kind == "stable" {
			secret = f.StableSecretHex
		}
		if len(f.Tags[group]) == 0 {
			t.Fatalf("no %s tags", group)
		}
		for _, c := range f.Tags[group] {
			h, tag, err := AliasTag(kind, secret, []byte(c.Message))
			if err != nil || h != c.HMAC || tag != c.Tag {
				t.Errorf("%s %q: %s %s %v, want %s %s", kind, c.Message, h, tag, err, c.HMAC, c.Tag)
			}
		}
	}
	for _, c := range f.IsAlias {
		if got, err := IsAlias(c.Text); err != nil || got != c.Alias {
			t.Errorf("is_alias %q: %v %v", c.Text, got, err)
		}
	}
}

func TestVectorsReceiptChainExports(t *testing.T) {
	var f struct {
		JWKS         json.RawMessage `json:"jwks"`
		ChainExports []struct {
			Name       string          `json:"name"`
			Input      json.RawMessage `json:"input"`
			NowSeconds int64           `json:"now_seconds"`
			AllowGaps  bool            `json:"allow_gaps"`
			Expected   json.RawMessage `json:"expected"`
		} `json:"chain_exports"`
	}
	vectors(t, "receipts.json", &f)
	for _, c := range f.ChainExports {
		input := string(c.Input)
		var text string
		if json.Unmarshal(c.Input, &text) == nil {
			input = text // JSON text or JSON Lines
		}
		got, err := VerifyChainExport(input, string(f.JWKS), map[string]any{"now_seconds": c.NowSeconds, "allow_gaps": c.AllowGaps})
		if err != nil {
			t.Errorf("%s: %v (expected %s)", c.Name, err, c.Expected)
			continue
		}
		// Every member the vector names, compared exactly (the engine adds first_seq, last_seq, break.result).
		var g, w any
		_ = json.Unmarshal([]byte(got), &g)
		_ = json.Unmarshal(c.Expected, &w)
		if !reflect.DeepEqual(project(g, w), w) {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got, c.Expected)
		}
	}
	if len(f.ChainExports) == 0 {
		t.Fatal("no chain exports")
	}
}

// The delivery of webhooks.json verifies with its headers at its timestamp.
func TestVectorsWebhookDelivery(t *testing.T) {
	var f struct {
		Secret   string `json:"secret"`
		Delivery struct {
			Body    string            `json:"body"`
			Headers map[string]string `json:"headers"`
			Payload struct {
				Timestamp int64 `json:"timestamp"`
			} `json:"payload"`
		} `json:"delivery"`
	}
	vectors(t, "webhooks.json", &f)
	h, _ := json.Marshal(f.Delivery.Headers)
	got, err := VerifyWebhook([]byte(f.Delivery.Body), string(h), f.Secret, map[string]any{"now_seconds": f.Delivery.Payload.Timestamp})
	if err != nil || got != `{"ok":true}` {
		t.Fatalf("%s %v", got, err)
	}
}

// project keeps of got only what want names: the members of want's objects, element by element in arrays.
func project(got, want any) any {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := map[string]any{}
		for k, wv := range w {
			if gv, present := g[k]; present {
				out[k] = project(gv, wv)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = project(g[i], w[i])
		}
		return out
	}
	return got
}

// A library of another C ABI version is refused with engine_abi_mismatch, not called.
func TestAnotherABIVersionIsRefused(t *testing.T) {
	real := LoadedABIVersion
	defer func() { LoadedABIVersion = real }()
	LoadedABIVersion = func() int { return ABIVersion + 1 }
	err := CheckABI()
	if e, ok := err.(*Error); !ok || e.Code != "engine_abi_mismatch" || !strings.Contains(e.Message, "rebuild sdks/rust") {
		t.Fatalf("%v", err)
	}
}
