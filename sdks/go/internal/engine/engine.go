// Package engine binds the Privacy Relay on-device engine (the Rust crate sdks/rust, C ABI privacy_relay.h) with
// cgo, linked statically against sdks/rust/target/release/libprivacy_relay.a. Every call passes JSON text in and
// gets JSON text (or plain text) out; a failure is an *Error built from the error JSON the library writes to
// *out (never pr_last_error: goroutines move between threads).
package engine

/*
#cgo CFLAGS: -I${SRCDIR}/../../../rust/ffi/include
#cgo LDFLAGS: ${SRCDIR}/../../../rust/target/release/libprivacy_relay.a -lm -ldl -lpthread
#include <stdlib.h>
#include "privacy_relay.h"

// Test hook: pr_tokenise_request with a NULL body (Go strings are never NULL).
static int pr_go_tokenise_null_body(char **out) { return pr_tokenise_request("chat.completions", NULL, NULL, out); }
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ABIVersion is the C ABI version this binding was written against (PR_ABI_VERSION of the header it compiled).
const ABIVersion = int(C.PR_ABI_VERSION)

// Error is a failure the engine reported: Number (PR_E_*), Code (its stable name), Message and Details.
type Error struct {
	Number  int
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return fmt.Sprintf("privacy relay engine: %s: %s", e.Code, e.Message) }

// ErrClosed is returned by a Detokeniser used after Close.
var ErrClosed = errors.New("privacy relay engine: detokeniser is closed")

func cstr(s string) *C.char { return C.CString(s) }

// take copies and frees a string the library returned.
func take(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.pr_string_free(p)
	return s
}

// result maps (return code, *out) to (text, error).
func result(rc C.int, out *C.char) (string, error) {
	text := take(out)
	if rc == C.PR_OK {
		return text, nil
	}
	return "", errorOf(int(rc), text)
}

func errorOf(number int, text string) *Error {
	e := &Error{Number: number, Code: C.GoString(C.pr_error_code_name(C.int(number)))}
	var parsed struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if text != "" && json.Unmarshal([]byte(text), &parsed) == nil && parsed.Error.Code != "" {
		e.Code, e.Message, e.Details = parsed.Error.Code, parsed.Error.Message, parsed.Error.Details
	} else {
		e.Message = "the engine returned error " + fmt.Sprint(number) + " without an error document"
	}
	return e
}

// LoadedABIVersion is pr_abi_version() of the linked library (a variable so tests can stand in another version).
var LoadedABIVersion = func() int { return int(C.pr_abi_version()) }

// CheckABI fails when the linked library's ABI differs from the header this binding compiled against.
func CheckABI() error {
	if got := LoadedABIVersion(); got != ABIVersion {
		return &Error{Number: 4, Code: "engine_abi_mismatch", Message: fmt.Sprintf("the engine library speaks C ABI %d, this SDK needs %d: rebuild sdks/rust (sdks/go/ci.sh does) and go build again", got, ABIVersion)}
	}
	return nil
}

// Info is pr_engine_info.
type Info struct {
	ID          string   `json:"id"`
	Version     string   `json:"version"`
	SHA256      string   `json:"sha256"`
	ABIVersion  int      `json:"abi_version"`
	Routes      []string `json:"routes"`
	EntityTypes []string `json:"entity_types"`
	// EgressPolicy identifies the egress policy compiled in (sdks/vectors/egress-policy.json: version, sha256).
	EgressPolicy struct {
		Version int    `json:"version"`
		SHA256  string `json:"sha256"`
	} `json:"egress_policy"`
	// Gazetteer counts the builtin name model's lists (sdks/vectors/name-model.json's lexicon).
	Gazetteer map[string]int `json:"gazetteer"`
}

var (
	infoOnce sync.Once
	info     Info
	infoErr  error
)

// EngineInfo answers the engine's identity (cached).
func EngineInfo() (Info, error) {
	infoOnce.Do(func() {
		var out *C.char
		text, err := result(C.pr_engine_info(&out), out)
		if err != nil {
			infoErr = err
			return
		}
		infoErr = json.Unmarshal([]byte(text), &info)
	})
	return info, infoErr
}

// TokenisedRequest is pr_tokenise_request's answer.
type TokenisedRequest struct {
	Body             json.RawMessage `json:"body"`
	BodyText         string          `json:"body_text"`
	Map              [][2]string     `json:"map"`
	DetectorsFired   map[string]int  `json:"detectors_fired"`
	Passthrough      json.RawMessage `json:"passthrough"`
	NameModelSkipped bool            `json:"name_model_skipped"`
}

// TokeniseRequest tokenises one request body (JSON text) for route; options as the header documents.
func TokeniseRequest(route, bodyJSON string, options map[string]any) (*TokenisedRequest, error) {
	text, err := call3(route, bodyJSON, optionsText(options), func(a, b, c *C.char, out **C.char) C.int {
		return C.pr_tokenise_request(a, b, c, out)
	})
	if err != nil {
		return nil, err
	}
	var t TokenisedRequest
	if err := json.Unmarshal([]byte(text), &t); err != nil {
		return nil, fmt.Errorf("privacy relay engine: tokenise_request answer: %w", err)
	}
	return &t, nil
}

// TokenisedText is pr_tokenise_text's answer.
type TokenisedText struct {
	Text           string         `json:"text"`
	Map            [][2]string    `json:"map"`
	DetectorsFired map[string]int `json:"detectors_fired"`
}

// TokeniseText tokenises one text.
func TokeniseText(text string, options map[string]any) (*TokenisedText, error) {
	out, err := call2(text, optionsText(options), func(a, b *C.char, out **C.char) C.int { return C.pr_tokenise_text(a, b, out) })
	if err != nil {
		return nil, err
	}
	var t TokenisedText
	return &t, json.Unmarshal([]byte(out), &t)
}

// Detokenise restores the originals of mapJSON's aliases in text.
func Detokenise(text, mapJSON string) (string, error) {
	return call2(text, mapJSON, func(a, b *C.char, out **C.char) C.int { return C.pr_detokenise(a, b, out) })
}

// Canonicalize answers the RFC 8785 text of jsonText.
func Canonicalize(jsonText string) (string, error) {
	a := cstr(jsonText)
	defer C.free(unsafe.Pointer(a))
	var out *C.char
	return result(C.pr_canonicalize(a, &out), out)
}

// VerifyReceipt is pr_verify_receipt: a verdict JSON {valid, reason, checks}.
func VerifyReceipt(receipt, jwksJSON string, options map[string]any) (string, error) {
	return call3(receipt, jwksJSON, optionsText(options), func(a, b, c *C.char, out **C.char) C.int {
		return C.pr_verify_receipt(a, b, c, out)
	})
}

// VerifyChain is pr_verify_chain.
func VerifyChain(receiptsJSON, jwksJSON string, options map[string]any) (string, error) {
	return call3(receiptsJSON, jwksJSON, optionsText(options), func(a, b, c *C.char, out **C.char) C.int {
		return C.pr_verify_chain(a, b, c, out)
	})
}

// VerifyWebhook is pr_verify_webhook: {ok} or {ok:false, code, message}.
func VerifyWebhook(body []byte, headersJSON, secret string, options map[string]any) (string, error) {
	h, s, o := cstr(headersJSON), cstr(secret), cstr(optionsText(options))
	defer C.free(unsafe.Pointer(h))
	defer C.free(unsafe.Pointer(s))
	defer C.free(unsafe.Pointer(o))
	var p *C.uint8_t
	if len(body) > 0 {
		cb := C.CBytes(body)
		defer C.free(cb)
		p = (*C.uint8_t)(cb)
	} else {
		empty := C.CBytes([]byte{0})
		defer C.free(empty)
		p = (*C.uint8_t)(empty)
	}
	var out *C.char
	return result(C.pr_verify_webhook(p, C.size_t(len(body)), h, s, o, &out), out)
}

// Attestation is pr_build_attestation's answer.
type Attestation struct {
	Envelope     json.RawMessage `json:"envelope"`
	Header       string          `json:"header"`
	EngineHeader string          `json:"engine_header"`
}

// BuildAttestation builds and signs the v3 attestation of one egress body with the device key.
func BuildAttestation(input map[string]any, privateJWK string) (*Attestation, error) {
	in, err := json.Marshal(input)
	if err != nil {
		return nil, err
	}
	text, err := call2(string(in), privateJWK, func(a, b *C.char, out **C.char) C.int { return C.pr_build_attestation(a, b, out) })
	if err != nil {
		return nil, err
	}
	var a Attestation
	return &a, json.Unmarshal([]byte(text), &a)
}

// DeviceKey is pr_generate_device_key's answer.
type DeviceKey struct {
	PrivateJWK json.RawMessage `json:"private_jwk"`
	PublicJWK  json.RawMessage `json:"public_jwk"`
	Kid        string          `json:"kid"`
}

// GenerateDeviceKey makes a fresh P-256 device key.
func GenerateDeviceKey() (*DeviceKey, error) {
	var out *C.char
	text, err := result(C.pr_generate_device_key(&out), out)
	if err != nil {
		return nil, err
	}
	var k DeviceKey
	return &k, json.Unmarshal([]byte(text), &k)
}

// Detokeniser restores aliases in a streamed answer whose chunks may cut an alias in two: one per text field of
// one response. Not safe for concurrent use. Close releases the engine handle (a finalizer does it too).
type Detokeniser struct {
	mu     sync.Mutex
	handle *C.pr_detokeniser
}

// NewDetokeniser opens a streaming detokeniser over mapJSON ([[alias, original], ...] or {alias: original}).
func NewDetokeniser(mapJSON string) (*Detokeniser, error) {
	m := cstr(mapJSON)
	defer C.free(unsafe.Pointer(m))
	var h *C.pr_detokeniser
	var out *C.char
	rc := C.pr_detokeniser_new(m, &h, &out)
	if _, err := result(rc, out); err != nil {
		if h != nil {
			C.pr_detokeniser_free(h)
		}
		return nil, err
	}
	d := &Detokeniser{handle: h}
	runtime.SetFinalizer(d, (*Detokeniser).Close)
	return d, nil
}

// Push feeds one chunk; answers the text safe to show now.
func (d *Detokeniser) Push(chunk string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.handle == nil {
		return "", ErrClosed
	}
	c := cstr(chunk)
	defer C.free(unsafe.Pointer(c))
	var out *C.char
	return result(C.pr_detokeniser_push(d.handle, c, &out), out)
}

// Finish answers what was held back (the stream ended).
func (d *Detokeniser) Finish() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.handle == nil {
		return "", ErrClosed
	}
	var out *C.char
	return result(C.pr_detokeniser_finish(d.handle, &out), out)
}

// Close releases the handle; a second Close does nothing.
func (d *Detokeniser) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.handle != nil {
		C.pr_detokeniser_free(d.handle)
		d.handle = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

func optionsText(options map[string]any) string {
	if len(options) == 0 {
		return ""
	}
	b, err := json.Marshal(options)
	if err != nil {
		return "{" // the engine answers invalid_json
	}
	return string(b)
}

func call2(a, b string, f func(a, b *C.char, out **C.char) C.int) (string, error) {
	ca, cb := cstr(a), cstr(b)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	var out *C.char
	return result(f(ca, cb, &out), out)
}

func call3(a, b, c string, f func(a, b, c *C.char, out **C.char) C.int) (string, error) {
	ca, cb, cc := cstr(a), cstr(b), cstr(c)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	defer C.free(unsafe.Pointer(cc))
	var out *C.char
	return result(f(ca, cb, cc, &out), out)
}

// tokeniseNullBody and debugPanic exist for the tests of the error path.
func tokeniseNullBody() error {
	var out *C.char
	_, err := result(C.pr_go_tokenise_null_body(&out), out)
	return err
}

func debugPanic() error {
	var out *C.char
	_, err := result(C.pr_debug_panic(&out), out)
	return err
}
