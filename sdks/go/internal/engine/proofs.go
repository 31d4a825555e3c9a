package engine

// Hashes, Merkle and transparency proofs, webhook signing and span detection: the engine's wire helpers, bound so
// every file of sdks/vectors runs through the C ABI (and the SDK uses one implementation of each).

/*
#include <stdlib.h>
#include "privacy_relay.h"
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// Hash is pr_hash: kind sha256, json_body_sha256, merkle_leaf or merkle_node (data = left || right), lowercase hex.
func Hash(kind string, data []byte) (string, error) {
	k := cstr(kind)
	defer C.free(unsafe.Pointer(k))
	// A non-NULL pointer even for no bytes: the engine refuses NULL with a length, and C.CBytes of nothing is NULL.
	buf := C.CBytes(append(append([]byte{}, data...), 0))
	defer C.free(buf)
	var out *C.char
	return result(C.pr_hash(k, (*C.uint8_t)(buf), C.size_t(len(data)), &out), out)
}

// SignWebhook is pr_sign_webhook: scheme v1 (body the exact text; options timestamp) or v0 (body the payload's
// JSON text); the signature header value.
func SignWebhook(scheme, body, secret string, options map[string]any) (string, error) {
	s, b := cstr(scheme), cstr(body)
	defer C.free(unsafe.Pointer(s))
	defer C.free(unsafe.Pointer(b))
	return call2(secret, optionsText(options), func(sec, o *C.char, out **C.char) C.int { return C.pr_sign_webhook(s, b, sec, o, out) })
}

// VerifyMerkleProof is pr_verify_merkle_proof: kind inclusion or consistency on bare hex hashes.
func VerifyMerkleProof(kind string, input any) (bool, error) {
	in, err := json.Marshal(input)
	if err != nil {
		return false, err
	}
	text, err := call2(kind, string(in), func(a, b *C.char, out **C.char) C.int { return C.pr_verify_merkle_proof(a, b, out) })
	if err != nil {
		return false, err
	}
	var v struct {
		Valid bool `json:"valid"`
	}
	return v.Valid, json.Unmarshal([]byte(text), &v)
}

// VerifyInclusionProof is pr_verify_inclusion_proof: a transparency-log inclusion proof against a signed tree
// head (sthJSON "": the proof's own sth); options: receipt (binds the proof to it). A verdict JSON.
func VerifyInclusionProof(proofJSON, sthJSON, jwksJSON string, options map[string]any) (string, error) {
	p, j, o := cstr(proofJSON), cstr(jwksJSON), cstr(optionsText(options))
	defer C.free(unsafe.Pointer(p))
	defer C.free(unsafe.Pointer(j))
	defer C.free(unsafe.Pointer(o))
	var sth *C.char
	if sthJSON != "" {
		sth = cstr(sthJSON)
		defer C.free(unsafe.Pointer(sth))
	}
	var out *C.char
	return result(C.pr_verify_inclusion_proof(p, sth, j, o, &out), out)
}

// VerifyConsistencyProof is pr_verify_consistency_proof: the log of oldHeadJSON is a prefix of the newer one
// (options: new_head; default the proof's own sth). A verdict JSON.
func VerifyConsistencyProof(proofJSON, oldHeadJSON, jwksJSON string, options map[string]any) (string, error) {
	p, h, j, o := cstr(proofJSON), cstr(oldHeadJSON), cstr(jwksJSON), cstr(optionsText(options))
	defer C.free(unsafe.Pointer(p))
	defer C.free(unsafe.Pointer(h))
	defer C.free(unsafe.Pointer(j))
	defer C.free(unsafe.Pointer(o))
	var out *C.char
	return result(C.pr_verify_consistency_proof(p, h, j, o, &out), out)
}

// Span is one value pr_detect_spans found: Start/End in UTF-16 code units (the vectors' unit), ByteStart/ByteEnd
// into the UTF-8.
type Span struct {
	Start     int    `json:"start"`
	End       int    `json:"end"`
	Type      string `json:"type"`
	Value     string `json:"value"`
	ByteStart int    `json:"byte_start"`
	ByteEnd   int    `json:"byte_end"`
}

// DetectSpans is pr_detect_spans: the values the engine finds in text (options as TokeniseText's).
func DetectSpans(text string, options map[string]any) ([]Span, error) {
	out, err := call2(text, optionsText(options), func(a, b *C.char, out **C.char) C.int { return C.pr_detect_spans(a, b, out) })
	if err != nil {
		return nil, err
	}
	var doc struct {
		Spans []Span `json:"spans"`
	}
	return doc.Spans, json.Unmarshal([]byte(out), &doc)
}

// AliasTag is pr_alias_tag: kind request (message "TYPE_index#attempt") or stable (message "TYPE\x00value"),
// under the hex secret; the HMAC and the tag.
func AliasTag(kind, secretHex string, message []byte) (hmacHex, tag string, err error) {
	k, s := cstr(kind), cstr(secretHex)
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(s))
	buf := C.CBytes(append(append([]byte{}, message...), 0))
	defer C.free(buf)
	var out *C.char
	text, err := result(C.pr_alias_tag(k, s, (*C.uint8_t)(buf), C.size_t(len(message)), &out), out)
	if err != nil {
		return "", "", err
	}
	var v struct {
		HMAC string `json:"hmac_sha256"`
		Tag  string `json:"tag"`
	}
	return v.HMAC, v.Tag, json.Unmarshal([]byte(text), &v)
}

// IsAlias is pr_is_alias: whether text is exactly one alias.
func IsAlias(text string) (bool, error) {
	t := cstr(text)
	defer C.free(unsafe.Pointer(t))
	var out *C.char
	answer, err := result(C.pr_is_alias(t, &out), out)
	return answer == "true", err
}

// VerifyChainExport is pr_verify_chain_export: {valid, chains} for an export of receipt chains (its JSON, JSON
// Lines text or an array of receipts); options now_seconds, allow_gaps.
func VerifyChainExport(exported, jwksJSON string, options map[string]any) (string, error) {
	return call3(exported, jwksJSON, optionsText(options), func(a, b, c *C.char, out **C.char) C.int {
		return C.pr_verify_chain_export(a, b, c, out)
	})
}
