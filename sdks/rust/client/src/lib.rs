//! The Rust SDK of Privacy Relay: `RelayClient`, async on reqwest, on the on-device engine (crate `privacy-relay`).
//! Every request body is tokenised under the egress policy and attested on the device before it leaves; answers
//! come back with the originals restored (streams as they arrive); receipts are verified offline against the
//! gateway's published keys. The client talks only to a URL that passed the gateway identity probe.

pub mod rest;

pub use rest::{Auth, Rest};
use futures_util::StreamExt;
use privacy_relay::attestation::{build_attestation, encode_attestation_header, AttestationInput};
use privacy_relay::tokeniser::request::{tokenise_request, Route, TokeniseError, TokenisedRequest};
use privacy_relay::tokeniser::session::{MediaPolicy, NameModel, SessionOptions};
use privacy_relay::tokeniser::{alias_regex, StreamingDetokeniser};
use privacy_relay::verify::{verify_receipt, Jwks, VerificationResult};
use privacy_relay::wire::decode_json_header;
use privacy_relay::wire::ecdsa::{is_public_jwk, SigningKey};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

pub const GATEWAY_IDENTITY_PROBE_PATH: &str = "/api/.well-known/service-receipt-pubkeys.jwks";

/// A failed call: the HTTP status (0 when nothing was answered), a stable code, a message, the request id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayError {
    pub status: u16,
    pub code: String,
    pub message: String,
    pub request_id: Option<String>,
    /// `details` of the error (e.g. the JSON pointer of a refused field).
    pub details: Option<Value>,
}

impl std::fmt::Display for RelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request {id})")?;
        }
        Ok(())
    }
}
impl std::error::Error for RelayError {}

pub(crate) fn local(status: u16, code: &str, message: impl Into<String>) -> RelayError {
    RelayError { status, code: code.into(), message: message.into(), request_id: None, details: None }
}

impl From<TokeniseError> for RelayError {
    fn from(e: TokeniseError) -> Self {
        match e {
            TokeniseError::InvalidRequestBody(m) => local(400, "invalid_request", m),
            TokeniseError::Egress(r) => RelayError { status: r.status(), code: r.code.into(), details: Some(r.details()), message: r.message, request_id: None },
        }
    }
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub name_model: NameModel,
    /// Retries of a call the gateway could not take now (429, 502, 503, 504, or no answer), honouring Retry-After.
    pub retries: u32,
    pub timeout: Duration,
    /// The device key that signs attestations (default: a fresh one per client).
    pub device_key: Option<SigningKey>,
    /// The device-held alias secret: end-user identifiers' USER_ aliases, and idempotent retries' aliases.
    pub device_alias_secret: Option<Vec<u8>>,
    pub media_policy: MediaPolicy,
    pub passthrough_paths: Vec<String>,
    /// A portal token (spt_...) for the portal calls of the REST capability set.
    pub portal_token: Option<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            name_model: NameModel::Builtin,
            retries: 2,
            timeout: Duration::from_secs(60),
            device_key: None,
            device_alias_secret: None,
            media_policy: MediaPolicy::Refuse,
            passthrough_paths: Vec::new(),
            portal_token: None,
        }
    }
}

/// How long to wait before retrying an answer the gateway could not give now (429, 502, 503, 504: Retry-After, else
/// backoff; a refused connection: backoff), or None when the answer stands.
pub(crate) fn retry_wait(res: &Result<reqwest::Response, reqwest::Error>, attempt: u32) -> Option<Duration> {
    let backoff = || Duration::from_secs_f64(0.25 * 2f64.powi(attempt as i32));
    match res {
        Ok(r) if [429, 502, 503, 504].contains(&r.status().as_u16()) => Some(
            r.headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|s| Duration::from_secs_f64(s.clamp(0.0, 30.0)))
                .unwrap_or_else(backoff),
        ),
        Err(e) if e.is_connect() => Some(backoff()),
        _ => None,
    }
}

/// A provider-shaped answer with the relay's metadata.
#[derive(Debug, Clone)]
pub struct RelayAnswer {
    /// The provider's JSON, originals restored.
    pub body: Value,
    pub request_id: Option<String>,
    /// The decoded X-Service-Receipt-V2 (none for demo keys and unbilled routes).
    pub receipt: Option<Value>,
    pub receipt_verified: Option<bool>,
    pub receipt_verification: Option<VerificationResult>,
    /// Exactly what left this device.
    pub tokenised_request: Value,
}

pub struct RelayClient {
    http: reqwest::Client,
    gateway_url: String,
    api_key: String,
    key: SigningKey,
    options: ClientOptions,
    jwks: Mutex<Option<Value>>,
}

pub(crate) fn new_uuid() -> String {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).expect("operating system randomness");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = privacy_relay::wire::hashing::hex(&b);
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

/// An original as it appears inside a JSON string (quotes, backslashes and control characters escaped).
fn escape_for_json_string(original: &str) -> String {
    let quoted = Value::String(original.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// Restores aliases in a parsed JSON answer, string by string. The value of an `arguments` key (a tool call's
/// arguments: JSON text inside a JSON string) takes each original JSON-escaped, so it still parses when an
/// original holds a quote, a backslash or a newline; every other string takes the original as it is.
pub fn detokenise_json_value(value: &mut Value, map: &HashMap<String, String>) {
    fn restore(text: &str, map: &HashMap<String, String>, json_text: bool) -> String {
        alias_regex()
            .replace_all(text, |c: &regex::Captures<'_>| match map.get(&c[0]) {
                Some(original) if json_text => escape_for_json_string(original),
                Some(original) => original.clone(),
                None => c[0].to_string(),
            })
            .into_owned()
    }
    fn walk(value: &mut Value, map: &HashMap<String, String>, json_text: bool) {
        match value {
            Value::String(s) => *s = restore(s, map, json_text),
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, map, false)),
            Value::Object(fields) => fields.iter_mut().for_each(|(k, v)| walk(v, map, k == "arguments")),
            _ => {}
        }
    }
    if !map.is_empty() {
        walk(value, map, false);
    }
}

impl RelayClient {
    pub fn new(gateway_url: &str, api_key: &str) -> Result<Self, RelayError> {
        Self::with_options(gateway_url, api_key, ClientOptions::default())
    }

    pub fn with_options(gateway_url: &str, api_key: &str, options: ClientOptions) -> Result<Self, RelayError> {
        let url = gateway_url.trim_end_matches('/').to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(local(0, "invalid_gateway_url", format!("gateway_url must be an http(s) URL, not {gateway_url:?}")));
        }
        if api_key.trim().is_empty() {
            return Err(local(0, "configuration_error", "an API key is needed"));
        }
        let http = reqwest::Client::builder()
            .timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| local(0, "configuration_error", e.to_string()))?;
        let key = options.device_key.clone().unwrap_or_else(SigningKey::generate);
        Ok(RelayClient { http, gateway_url: url, api_key: api_key.trim().to_string(), key, options, jwks: Mutex::new(None) })
    }

    pub fn gateway_url(&self) -> &str {
        &self.gateway_url
    }

    /// The gateway identity probe (once; again after a failure): nothing is sent before it passed.
    pub async fn jwks(&self) -> Result<Value, RelayError> {
        if let Some(j) = self.jwks.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(j);
        }
        let url = format!("{}{}", self.gateway_url, GATEWAY_IDENTITY_PROBE_PATH);
        let not_a_gateway = |why: String| {
            local(0, "gateway_identity_failed", format!("gateway_url {} is not a Privacy Relay gateway: {why} at GET {GATEWAY_IDENTITY_PROBE_PATH}. Client components only talk to a gateway, never to a provider.", self.gateway_url))
        };
        let res = self.http.get(&url).header("accept", "application/json").send().await.map_err(|e| {
            local(0, "gateway_identity_failed", format!("gateway_url {} cannot be reached: {e}. Is the gateway running, and is the URL right?", self.gateway_url))
        })?;
        if res.status().as_u16() != 200 {
            return Err(not_a_gateway(format!("status {}", res.status().as_u16())));
        }
        let body: Value = res.json().await.unwrap_or(Value::Null);
        let keys_ok = body.get("keys").and_then(Value::as_array).map_or(false, |k| !k.is_empty() && k.iter().all(|k| is_public_jwk(Some(k))));
        if !keys_ok {
            return Err(not_a_gateway("the answer is not a JWKS of P-256 receipt keys".into()));
        }
        *self.jwks.lock().unwrap_or_else(|e| e.into_inner()) = Some(body.clone());
        Ok(body)
    }

    /// Offline verification of a receipt (header value, JSON text or object) with the gateway's keys.
    pub async fn verify_receipt(&self, receipt: &Value) -> Result<VerificationResult, RelayError> {
        let jwks = Jwks::new(&self.jwks().await?).map_err(|e| local(0, "jwks_invalid", e.message))?;
        verify_receipt(receipt, &jwks, privacy_relay::attestation::now_seconds() as f64, None, None).map_err(|e| local(0, &e.code, e.message))
    }

    fn prepare(&self, route: Route, body: &Value, idempotency_key: Option<&str>) -> Result<(TokenisedRequest, String), RelayError> {
        let secret = match (idempotency_key, &self.options.device_alias_secret) {
            (Some(k), Some(device)) => Some(privacy_relay::tokeniser::session::idempotent_alias_secret(device, k).to_vec()),
            _ => None,
        };
        let options = SessionOptions {
            names: self.options.name_model,
            secret,
            identifier_secret: self.options.device_alias_secret.clone(),
            media_policy: self.options.media_policy,
            passthrough_paths: self.options.passthrough_paths.clone(),
            ..Default::default()
        };
        let t = tokenise_request(route, body, options)?;
        let envelope = build_attestation(
            &AttestationInput {
                route: route.as_str(),
                body_bytes: &t.body_bytes,
                body_is_canonical: true,
                detectors_fired: t.detectors_fired.clone(),
                engine: privacy_relay::engine_identity(),
                trust_tier: None,
                jti: None,
                iat: None,
                passthrough: t.passthrough_claim(),
                deterministic: false,
            },
            &self.key,
        )
        .map_err(|e| local(400, "invalid_request", e))?;
        let header = encode_attestation_header(&envelope).map_err(|e| local(400, "invalid_request", e))?;
        Ok((t, header))
    }

    async fn send(&self, route: Route, path: &str, t: &TokenisedRequest, attestation: &str, stream: bool, idempotency_key: &str) -> Result<reqwest::Response, RelayError> {
        self.jwks().await?;
        let mut attempt = 0;
        loop {
            let res = self
                .http
                .post(format!("{}{}", self.gateway_url, path))
                .header("authorization", format!("Bearer {}", self.api_key))
                .header("content-type", "application/json")
                .header("accept", if stream { "text/event-stream" } else { "application/json" })
                .header("idempotency-key", idempotency_key)
                .header("x-service-engine", privacy_relay::engine_identity().header_value())
                .header("x-service-attestation", attestation)
                .body(t.body_bytes.clone())
                .send()
                .await;
            match retry_wait(&res, attempt) {
                Some(wait) if attempt < self.options.retries => {
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                _ => {
                    let res = res.map_err(|e| local(0, if e.is_timeout() { "timeout" } else { "connection_error" }, format!("{} {}: {e}", route.as_str(), path)))?;
                    if res.status().is_success() {
                        return Ok(res);
                    }
                    return Err(error_of(res).await);
                }
            }
        }
    }

    async fn relay(&self, route: Route, path: &str, body: Value) -> Result<RelayAnswer, RelayError> {
        let key = new_uuid();
        let (t, attestation) = self.prepare(route, &body, Some(&key))?;
        let res = self.send(route, path, &t, &attestation, false, &key).await?;
        let request_id = res.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
        let receipt = res.headers().get("x-service-receipt-v2").and_then(|v| v.to_str().ok()).and_then(decode_json_header);
        let text = res.text().await.map_err(|e| local(0, "connection_error", e.to_string()))?;
        let map: HashMap<String, String> = t.map.iter().cloned().collect();
        let mut body: Value = serde_json::from_str(&text).map_err(|e| local(502, "invalid_response", format!("the answer is not JSON: {e}")))?;
        detokenise_json_value(&mut body, &map);
        let verification = match &receipt {
            Some(r) => Some(self.verify_receipt(r).await?),
            None => None,
        };
        Ok(RelayAnswer {
            body,
            request_id,
            receipt_verified: verification.as_ref().map(|v| v.valid),
            receipt,
            receipt_verification: verification,
            tokenised_request: t.body,
        })
    }

    /// POST /api/v1/chat/completions (OpenAI shape), not streamed.
    pub async fn chat_completions(&self, body: Value) -> Result<RelayAnswer, RelayError> {
        self.relay(Route::ChatCompletions, "/api/v1/chat/completions", body).await
    }

    /// POST /api/v1/messages (Anthropic shape), not streamed.
    pub async fn messages(&self, body: Value) -> Result<RelayAnswer, RelayError> {
        self.relay(Route::Messages, "/api/v1/messages", body).await
    }

    /// POST /api/v1/embeddings.
    pub async fn embeddings(&self, body: Value) -> Result<RelayAnswer, RelayError> {
        self.relay(Route::Embeddings, "/api/v1/embeddings", body).await
    }

    /// POST /api/v1/responses (OpenAI Responses), not streamed.
    pub async fn responses(&self, body: Value) -> Result<RelayAnswer, RelayError> {
        self.relay(Route::Responses, "/api/v1/responses", body).await
    }

    /// GET /api/v1/models.
    pub async fn models(&self) -> Result<Value, RelayError> {
        self.jwks().await?;
        let res = self
            .http
            .get(format!("{}/api/v1/models", self.gateway_url))
            .header("authorization", format!("Bearer {}", self.api_key))
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| local(0, "connection_error", e.to_string()))?;
        if !res.status().is_success() {
            return Err(error_of(res).await);
        }
        res.json().await.map_err(|e| local(502, "invalid_response", e.to_string()))
    }

    /// A streamed chat completion (`stream: true` is set): OpenAI chunks with the originals restored as they arrive.
    pub async fn chat_completions_stream(&self, mut body: Value) -> Result<RelayStream, RelayError> {
        body["stream"] = Value::Bool(true);
        self.stream(Route::ChatCompletions, "/api/v1/chat/completions", body).await
    }

    /// A streamed Anthropic message (`stream: true` is set): events with the originals restored as they arrive.
    pub async fn messages_stream(&self, mut body: Value) -> Result<RelayStream, RelayError> {
        body["stream"] = Value::Bool(true);
        self.stream(Route::Messages, "/api/v1/messages", body).await
    }

    async fn stream(&self, route: Route, path: &str, body: Value) -> Result<RelayStream, RelayError> {
        let key = new_uuid();
        let (t, attestation) = self.prepare(route, &body, Some(&key))?;
        let res = self.send(route, path, &t, &attestation, true, &key).await?;
        let request_id = res.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
        Ok(RelayStream {
            bytes: Box::pin(res.bytes_stream()),
            buffer: Vec::new(),
            map: t.map.clone(),
            detokenisers: HashMap::new(),
            request_id,
            receipt: None,
            done: false,
            tokenised_request: t.body,
        })
    }
}

pub(crate) async fn error_of(res: reqwest::Response) -> RelayError {
    let status = res.status().as_u16();
    let request_id = res.headers().get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let body: Value = res.json().await.unwrap_or(Value::Null);
    let e = body.get("error").cloned().unwrap_or(Value::Null);
    let code = e.get("code").and_then(Value::as_str).or_else(|| e.get("type").and_then(Value::as_str)).unwrap_or("http_error").to_string();
    let message = e.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| format!("the gateway answered {status}"));
    RelayError { status, code, message, request_id, details: e.get("details").cloned() }
}

type ByteStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// A streamed answer: `next().await` gives each event's JSON with the originals restored; `receipt` once it ended.
pub struct RelayStream {
    bytes: ByteStream,
    buffer: Vec<u8>,
    map: Vec<(String, String)>,
    /// One streaming detokeniser per text channel (a choice index, a content block index).
    detokenisers: HashMap<String, StreamingDetokeniser>,
    pub request_id: Option<String>,
    /// The `receipt-v2` trailer, decoded, once the stream ended.
    pub receipt: Option<Value>,
    done: bool,
    pub tokenised_request: Value,
}

impl RelayStream {
    /// Pushes a piece of a streamed text field through its channel's detokeniser. A JSON-text channel (tool-call
    /// arguments, Anthropic `partial_json`) restores originals JSON-escaped, so the assembled text still parses.
    fn restore(&mut self, channel: String, text: &str, json_text: bool) -> String {
        let pairs: Vec<(String, String)> = if json_text {
            self.map.iter().map(|(alias, original)| (alias.clone(), escape_for_json_string(original))).collect()
        } else {
            self.map.clone()
        };
        self.detokenisers.entry(channel).or_insert_with(|| StreamingDetokeniser::new(pairs)).push(text)
    }

    fn restore_event(&mut self, mut event: Value) -> Value {
        // OpenAI chunks: each choice's delta.content and each tool call's function.arguments stream in pieces.
        if let Some(choices) = event.get_mut("choices").and_then(Value::as_array_mut) {
            let mut pieces = Vec::new();
            for (k, c) in choices.iter().enumerate() {
                let index = c.get("index").and_then(Value::as_u64).unwrap_or(k as u64);
                if let Some(text) = c.pointer("/delta/content").and_then(Value::as_str) {
                    pieces.push((format!("/choices/{k}/delta/content"), format!("choice{index}"), text.to_string(), false));
                }
                for (t, call) in c.pointer("/delta/tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                        let tool = call.get("index").and_then(Value::as_u64).unwrap_or(t as u64);
                        pieces.push((format!("/choices/{k}/delta/tool_calls/{t}/function/arguments"), format!("tool{index}.{tool}"), args.to_string(), true));
                    }
                }
            }
            for (pointer, channel, text, json_text) in pieces {
                let out = self.restore(channel, &text, json_text);
                if let Some(slot) = event.pointer_mut(&pointer) {
                    *slot = Value::String(out);
                }
            }
            return event;
        }
        // Anthropic: a content block's text_delta.text or input_json_delta.partial_json streams in pieces.
        if event.get("type").and_then(Value::as_str) == Some("content_block_delta") {
            let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
            if let Some(text) = event.pointer("/delta/text").and_then(Value::as_str).map(str::to_string) {
                event["delta"]["text"] = Value::String(self.restore(format!("block{index}"), &text, false));
            } else if let Some(json) = event.pointer("/delta/partial_json").and_then(Value::as_str).map(str::to_string) {
                event["delta"]["partial_json"] = Value::String(self.restore(format!("json{index}"), &json, true));
            }
            return event;
        }
        // Every other event is whole in one frame (message_start, content_block_start with a tool_use input, ...).
        let map: HashMap<String, String> = self.map.iter().cloned().collect();
        detokenise_json_value(&mut event, &map);
        event
    }

    /// The restored text still held back by every channel (call after the last event): channel -> text.
    pub fn flush(&mut self) -> HashMap<String, String> {
        self.detokenisers.iter_mut().map(|(k, d)| (k.clone(), d.flush())).filter(|(_, t)| !t.is_empty()).collect()
    }

    /// The next event (its JSON), None at the end of the stream.
    pub async fn next(&mut self) -> Option<Result<Value, RelayError>> {
        loop {
            // One SSE event per blank line.
            if let Some(end) = find_event_end(&self.buffer) {
                let raw: Vec<u8> = self.buffer.drain(..end.1).collect();
                let text = String::from_utf8_lossy(&raw[..end.0]).to_string();
                let mut name = None;
                let mut data = String::new();
                for line in text.split('\n') {
                    let line = line.trim_end_matches('\r');
                    if let Some(v) = line.strip_prefix("event:") {
                        name = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        if !data.is_empty() {
                            data.push('\n');
                        }
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if data.is_empty() || data == "[DONE]" {
                    continue;
                }
                let Ok(json) = serde_json::from_str::<Value>(&data) else {
                    return Some(Err(local(200, "stream_error", "an event of the stream is not JSON")));
                };
                if name.as_deref() == Some("receipt-v2") {
                    self.receipt = Some(json.get("receipt").cloned().unwrap_or(json));
                    continue;
                }
                return Some(Ok(self.restore_event(json)));
            }
            if self.done {
                return None;
            }
            match self.bytes.next().await {
                Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                Some(Err(e)) => return Some(Err(local(0, "stream_error", e.to_string()))),
                None => {
                    self.done = true;
                    if !self.buffer.is_empty() {
                        self.buffer.extend_from_slice(b"\n\n");
                    }
                }
            }
        }
    }
}

/// (end of the event text, end of the separator) of the first complete event in `buffer`.
fn find_event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i + 1 < buffer.len() {
        if buffer[i] == b'\n' && buffer[i + 1] == b'\n' {
            return Some((i, i + 2));
        }
        if i + 3 < buffer.len() && &buffer[i..i + 4] == b"\r\n\r\n" {
            return Some((i, i + 4));
        }
        i += 1;
    }
    None
}

/// The `json!` macro for callers building bodies.
pub use serde_json::json as body;
#[doc(hidden)]
pub fn _unused() -> Value {
    json!(null)
}

/// Reads the device key (a private P-256 JWK) from `path`, refusing a file that its group or others may read
/// (the key signs this device's attestations).
pub fn load_device_key(path: &std::path::Path) -> Result<SigningKey, RelayError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).map_err(|e| local(0, "configuration_error", format!("device key file {}: {e}", path.display())))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(local(
                0,
                "key_file_permissions",
                format!("device key file {} is readable by others (mode {mode:o}): chmod 600 it", path.display()),
            ));
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| local(0, "configuration_error", format!("device key file {}: {e}", path.display())))?;
    let jwk: Value = serde_json::from_str(&text).map_err(|e| local(0, "configuration_error", format!("device key file {} is not JSON: {e}", path.display())))?;
    SigningKey::from_private_jwk(&jwk).map_err(|e| local(0, "configuration_error", format!("device key file {}: {e}", path.display())))
}

/// Writes a device key (private JWK) to `path`, readable and writable by its owner only.
pub fn save_device_key(path: &std::path::Path, key: &SigningKey) -> Result<(), RelayError> {
    let text = key.private_jwk().to_string();
    #[cfg(unix)]
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| local(0, "configuration_error", format!("{}: {e}", path.display())))?;
        f.write_all(text.as_bytes()).map_err(|e| local(0, "configuration_error", e.to_string()))?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::write(path, text).map_err(|e| local(0, "configuration_error", e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_of(chunks: Vec<&'static str>, map: Vec<(String, String)>) -> RelayStream {
        let items: Vec<reqwest::Result<bytes::Bytes>> = chunks.into_iter().map(|c| Ok(bytes::Bytes::from_static(c.as_bytes()))).collect();
        RelayStream {
            bytes: Box::pin(futures_util::stream::iter(items)),
            buffer: Vec::new(),
            map,
            detokenisers: HashMap::new(),
            request_id: None,
            receipt: None,
            done: false,
            tokenised_request: Value::Null,
        }
    }

    fn map() -> Vec<(String, String)> {
        vec![("<EMAIL_1_ynha>".into(), "jane.doe@example.com".into())]
    }

    #[tokio::test]
    async fn sse_frames_cut_anywhere_and_aliases_cut_across_events() {
        let mut s = stream_of(
            vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"to <EMA\"}}]}\r\n",
                "\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"IL_1_ynha> ok\"}}]}\n\nev",
                "ent: receipt-v2\ndata: {\"receipt\":{\"v\":2}}\n\ndata: [DONE]\n\n",
            ],
            map(),
        );
        let mut text = String::new();
        while let Some(e) = s.next().await {
            text.push_str(e.unwrap()["choices"][0]["delta"]["content"].as_str().unwrap());
        }
        assert_eq!(text, "to jane.doe@example.com ok");
        assert_eq!(s.receipt, Some(json!({"v": 2})));
    }

    #[tokio::test]
    async fn streamed_tool_arguments_and_partial_json_are_restored_across_events_and_still_parse() {
        let quoted = vec![("<PERSON_1_abcd>".to_string(), "Jo \"Q\" Smith".to_string())];
        let mut s = stream_of(
            vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"to\\\":\\\"<PERSON\"}}]}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"_1_abcd>\\\"}\"}}]}}]}\n\n",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"<PERSON_1_abcd>\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"to\\\":\\\"<PERSON_1_ab\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"cd>\\\"}\"}}\n\n",
            ],
            quoted,
        );
        let (mut args, mut partial, mut whole) = (String::new(), String::new(), Value::Null);
        while let Some(e) = s.next().await {
            let e = e.unwrap();
            if let Some(a) = e.pointer("/choices/0/delta/tool_calls/0/function/arguments").and_then(Value::as_str) {
                args.push_str(a);
            } else if let Some(p) = e.pointer("/delta/partial_json").and_then(Value::as_str) {
                partial.push_str(p);
            } else {
                whole = e;
            }
        }
        assert_eq!(serde_json::from_str::<Value>(&args).unwrap()["to"], "Jo \"Q\" Smith");
        assert_eq!(serde_json::from_str::<Value>(&partial).unwrap()["to"], "Jo \"Q\" Smith");
        assert_eq!(whole["content_block"]["text"], "Jo \"Q\" Smith");
        assert!(s.flush().is_empty());
    }

    #[tokio::test]
    async fn malformed_sse_is_a_stream_error_not_a_panic() {
        let mut s = stream_of(vec!["data: {not json\n\n", "data: {\"ok\":1}"], map());
        let first = s.next().await.unwrap().unwrap_err();
        assert_eq!(first.code, "stream_error");
        // The stream goes on; a last event without its blank line still arrives.
        assert_eq!(s.next().await.unwrap().unwrap(), json!({"ok": 1}));
        assert!(s.next().await.is_none());
        let mut s = stream_of(vec![":comment\n\n", "event: ping\n\n", "\n\n\n"], map());
        assert!(s.next().await.is_none());
    }

    #[test]
    fn a_device_key_file_readable_by_others_is_refused() {
        let dir = std::env::temp_dir().join(format!("pr-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("device-key.json");
        let key = SigningKey::generate();
        save_device_key(&path, &key).unwrap();
        assert_eq!(load_device_key(&path).unwrap().kid(), key.kid());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(load_device_key(&path).unwrap_err().code, "key_file_permissions");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn answers_are_restored_as_is_in_strings_and_escaped_inside_tool_call_arguments() {
        let original = "Jo \"Q\" \\ Smith";
        let m: HashMap<String, String> = [("<PERSON_1_abcd>".to_string(), original.to_string())].into_iter().collect();
        let args = r#"{"to":"<PERSON_1_abcd>"}"#;
        let mut answer = serde_json::json!({"a": "hi <PERSON_1_abcd>", "b": ["<PERSON_9_zzzz>"],
            "choices": [{"message": {"tool_calls": [{"function": {"name": "mail", "arguments": args}}]}}]});
        detokenise_json_value(&mut answer, &m);
        assert_eq!(answer["a"], format!("hi {original}"));
        assert_eq!(answer["b"][0], "<PERSON_9_zzzz>");
        let restored: Value = serde_json::from_str(answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(restored["to"], original);
    }
}
