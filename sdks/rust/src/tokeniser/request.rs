//! tokeniseRequest under the egress policy (sdks/vectors/egress-policy.json): user text is tokenised (aliases
//! numbered in document order), end-user identifiers get device-stable `USER_<tag>` aliases, structure passes, and
//! everything else is refused before anything is sent. The bytes to send are the JCS text of the result.
//!
//! Which fields hold user text is decided by ONE function, `text_slots` (the field walk: egress.rs).

use super::egress::{check_egress_depth, walk_egress, EgressRefusal};
use super::jsre::limit_failures;
use super::session::{MediaPolicy, NameModel, SessionOptions, TokeniserSession};
use super::{tag_from_mac, tokenise_text, STABLE_TAG_LENGTH};
use crate::wire::jcs::{canonical_string, js_stringify};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    ChatCompletions,
    Messages,
    MessagesCountTokens,
    Embeddings,
    Responses,
}

impl Route {
    pub fn parse(name: &str) -> Option<Route> {
        match name {
            "chat.completions" => Some(Route::ChatCompletions),
            "messages" => Some(Route::Messages),
            "messages.count_tokens" => Some(Route::MessagesCountTokens),
            "embeddings" => Some(Route::Embeddings),
            "responses" => Some(Route::Responses),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Route::ChatCompletions => "chat.completions",
            Route::Messages => "messages",
            Route::MessagesCountTokens => "messages.count_tokens",
            Route::Embeddings => "embeddings",
            Route::Responses => "responses",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokeniseError {
    /// 400 invalid_request: the body is not what the route takes.
    InvalidRequestBody(String),
    /// The egress policy refuses the body: unsupported_field (400), unsupported_content (415, media) or
    /// nesting_too_deep (400), with the JSON pointer of the place. Nothing may be sent.
    Egress(EgressRefusal),
}

impl TokeniseError {
    pub fn code(&self) -> &'static str {
        match self {
            TokeniseError::InvalidRequestBody(_) => "invalid_request",
            TokeniseError::Egress(r) => r.code,
        }
    }
    pub fn message(&self) -> String {
        match self {
            TokeniseError::InvalidRequestBody(m) => m.clone(),
            TokeniseError::Egress(r) => r.message.clone(),
        }
    }
}

impl std::fmt::Display for TokeniseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}
impl std::error::Error for TokeniseError {}

#[derive(Debug, Clone)]
pub struct TokenisedRequest {
    /// The request body with every text field tokenised (a copy; the input is not modified).
    pub body: Value,
    /// The exact bytes to send: UTF-8 of the JCS form of `body` (egress_sha256 hashes them).
    pub body_bytes: Vec<u8>,
    /// Alias -> original, in the order minted. Keep it on the device.
    pub map: Vec<(String, String)>,
    /// Categories and counts of replaced values (never values), for the v3 attestation.
    pub detectors_fired: Map<String, Value>,
    pub name_model_skipped: bool,
    /// What an opt-in let through untokenised, (path, kind) sorted by path: the attestation's `passthrough` claim.
    pub passthrough: Vec<(String, String)>,
}

impl TokenisedRequest {
    /// The attestation's `passthrough` claim: `[{ "path", "kind" }]`, or None when nothing was let through.
    pub fn passthrough_claim(&self) -> Option<Value> {
        (!self.passthrough.is_empty()).then(|| Value::Array(self.passthrough.iter().map(|(p, k)| serde_json::json!({"path": p, "kind": k})).collect()))
    }
}

/// One step of a path into the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A place in the body that holds user text.
#[derive(Debug, Clone)]
pub enum Slot {
    /// A string at this path.
    Text(Vec<Seg>),
    /// A tool call's `arguments` (JSON text) at this path whose parsed value is a string: written back as
    /// JSON text of the tokenised string when it changed.
    JsonString(Vec<Seg>, String),
    /// A string leaf inside the parsed `arguments` number `doc` (see `Walk::docs`).
    JsonLeaf(usize, Vec<Seg>),
}

/// The slots of a body in the order their text is read (aliases are numbered by first appearance), and the
/// parsed tool-call argument documents their JSON leaves live in.
#[derive(Default)]
pub struct Walk {
    pub slots: Vec<Slot>,
    /// (path of the arguments string, parsed value, changed)
    pub docs: Vec<(Vec<Seg>, Value, bool)>,
}

fn get<'v>(root: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(root, |v, seg| match seg {
        Seg::Key(k) => v.as_object()?.get(k),
        Seg::Index(i) => v.as_array()?.get(*i),
    })
}

fn get_mut<'v>(root: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(root, |v, seg| match seg {
        Seg::Key(k) => v.as_object_mut()?.get_mut(k),
        Seg::Index(i) => v.as_array_mut()?.get_mut(*i),
    })
}

fn with(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut p = path.to_vec();
    p.push(seg);
    p
}

/// Every string inside a JSON value (object values and array items, at any depth; keys are names).
fn leaf_paths(value: &Value, path: Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match value {
        Value::String(_) => out.push(path),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaf_paths(item, with(&path, Seg::Index(i)), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                leaf_paths(v, with(&path, Seg::Key(k.clone())), out);
            }
        }
        _ => {}
    }
}

impl Walk {
    fn json_text_slots(&mut self, body: &Value, path: Vec<Seg>) {
        let Some(Value::String(text)) = get(body, &path) else { return };
        match serde_json::from_str::<Value>(text) {
            Err(_) => self.slots.push(Slot::Text(path)),
            Ok(Value::String(s)) => self.slots.push(Slot::JsonString(path, s)),
            Ok(parsed) => {
                let mut leaves = Vec::new();
                leaf_paths(&parsed, Vec::new(), &mut leaves);
                let doc = self.docs.len();
                self.docs.push((path, parsed, false));
                self.slots.extend(leaves.into_iter().map(|p| Slot::JsonLeaf(doc, p)));
            }
        }
    }

}

/// `USER_<tag>`: the device-stable alias of an end-user identifier, 10 characters of
/// HMAC-SHA256(secret, "end-user\0" + value) in the tag alphabet.
pub fn end_user_alias(secret: &[u8], value: &str) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(format!("end-user\u{0}{value}").as_bytes());
    format!("USER_{}", tag_from_mac(&mac.finalize().into_bytes(), STABLE_TAG_LENGTH))
}

/// The field walk: which places of `body` hold user text for `route`, in reading order, from the egress policy;
/// identifiers, media and passthrough come back in the egress walk.
pub fn text_slots(route: Route, body: &Value, passthrough_paths: &[String]) -> Result<(Walk, super::egress::EgressWalk), TokeniseError> {
    let egress = walk_egress(route.as_str(), body, passthrough_paths).map_err(TokeniseError::Egress)?;
    let mut walk = Walk::default();
    for (path, json) in &egress.texts {
        if *json {
            walk.json_text_slots(body, path.clone());
        } else {
            walk.slots.push(Slot::Text(path.clone()));
        }
    }
    Ok((walk, egress))
}

fn media_refusal(path: &str, kind: &str, why: &str) -> TokeniseError {
    TokeniseError::Egress(EgressRefusal {
        code: "unsupported_content",
        path: path.to_string(),
        message: format!("The {kind} at {path} is not sent: {why}. Nothing was sent."),
        kind: Some(kind.to_string()),
    })
}

fn urls_in<'v>(value: &'v Value, into: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => {
            if s.len() >= 7 && (s[..7].eq_ignore_ascii_case("http://") || s.get(..8).map_or(false, |p| p.eq_ignore_ascii_case("https://"))) {
                into.push(s);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| urls_in(v, into)),
        Value::Object(m) => m.values().for_each(|v| urls_in(v, into)),
        _ => {}
    }
}

/// The client's media policy over the walk's media: refused (the default), passed as they are (declared; a remote
/// URL holding an identifier is still refused), or, for images under "redact", painted over on the device (this
/// engine has no image redactor: refused).
fn apply_media_policy(body: &Value, media: &[(Vec<Seg>, String)], policy: MediaPolicy, passthrough: &mut Vec<(String, String)>) -> Result<(), TokeniseError> {
    for (path, kind) in media {
        let p = super::egress::pointer(path);
        match policy {
            MediaPolicy::Refuse => return Err(media_refusal(&p, kind, "the client does not send media it cannot tokenise (media_policy \"refuse\")")),
            MediaPolicy::Redact if kind != "image" => {
                return Err(media_refusal(
                    &p,
                    kind,
                    &format!("only images can be redacted on the device (media_policy \"redact\"); set media_policy \"pass\" to send {kind} untokenised"),
                ))
            }
            MediaPolicy::Redact => return Err(media_refusal(&p, kind, "this client has no image redactor")),
            MediaPolicy::Pass => {
                let mut urls = Vec::new();
                if let Some(v) = get(body, path) {
                    urls_in(v, &mut urls);
                }
                for url in urls {
                    let mut probe = TokeniserSession::new(SessionOptions { names: NameModel::Off, ..Default::default() });
                    if tokenise_text(url, &mut probe) != url {
                        return Err(media_refusal(&p, kind, "its URL holds a personal identifier"));
                    }
                }
                passthrough.push((p, kind.clone()));
            }
        }
    }
    Ok(())
}

/// Tokenises the user text of one request; see the module documentation.
pub fn tokenise_request(route: Route, body: &Value, options: SessionOptions) -> Result<TokenisedRequest, TokeniseError> {
    let mut session = TokeniserSession::new(options);
    tokenise_request_in(route, body, &mut session)
}

pub fn tokenise_request_in(route: Route, body: &Value, session: &mut TokeniserSession) -> Result<TokenisedRequest, TokeniseError> {
    if !body.is_object() {
        return Err(TokeniseError::InvalidRequestBody("request body must be a JSON object".into()));
    }
    if !matches!(route, Route::Embeddings | Route::Responses) && !body.get("messages").map_or(false, Value::is_array) {
        return Err(TokeniseError::InvalidRequestBody("messages must be an array".into()));
    }
    check_egress_depth(body).map_err(TokeniseError::Egress)?;
    let mut copy = body.clone();
    let passthrough_paths = session.options.passthrough_paths.clone();
    let (mut walk, egress) = text_slots(route, &copy, &passthrough_paths)?;
    let mut passthrough = egress.passthrough.clone();
    apply_media_policy(&copy, &egress.media, session.options.media_policy, &mut passthrough)?;
    let texts: Vec<String> = walk
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Text(p) => get(&copy, p).and_then(Value::as_str).unwrap_or_default().to_string(),
            Slot::JsonString(_, s) => s.clone(),
            Slot::JsonLeaf(doc, p) => get(&walk.docs[*doc].1, p).and_then(Value::as_str).unwrap_or_default().to_string(),
        })
        .collect();
    // Register every text first so no alias can coincide with a string already present anywhere in the request.
    for t in &texts {
        session.observe(t);
    }
    for (slot, text) in walk.slots.iter().zip(&texts) {
        let failures_before = limit_failures();
        let tokenised = tokenise_text(text, session);
        // Fail closed: a pattern that gave up (a resource limit) may have left a value unseen in this text.
        if limit_failures() != failures_before {
            return Err(TokeniseError::InvalidRequestBody(
                "a text in the body could not be fully scanned for personal data (a detector hit its resource limit); nothing was sent".into(),
            ));
        }
        match slot {
            Slot::Text(p) => {
                if let Some(v) = get_mut(&mut copy, p) {
                    *v = Value::String(tokenised);
                }
            }
            Slot::JsonString(p, parsed) => {
                if &tokenised != parsed {
                    if let Some(v) = get_mut(&mut copy, p) {
                        *v = Value::String(js_stringify(&Value::String(tokenised)).unwrap_or_default());
                    }
                }
            }
            Slot::JsonLeaf(doc, p) => {
                if &tokenised != text {
                    let d = &mut walk.docs[*doc];
                    if let Some(v) = get_mut(&mut d.1, p) {
                        *v = Value::String(tokenised);
                        d.2 = true;
                    }
                }
            }
        }
    }
    for (path, parsed, changed) in &walk.docs {
        if *changed {
            if let Some(v) = get_mut(&mut copy, path) {
                *v = Value::String(js_stringify(parsed).unwrap_or_default());
            }
        }
    }
    let mut detectors_fired = session.detectors_fired().clone();
    if !egress.identifiers.is_empty() {
        let secret = session.options.identifier_secret.clone().unwrap_or_else(|| {
            let mut s = vec![0u8; 32];
            getrandom::getrandom(&mut s).expect("operating system randomness");
            s
        });
        for path in &egress.identifiers {
            if let Some(v) = get_mut(&mut copy, path) {
                if let Value::String(s) = v {
                    *v = Value::String(end_user_alias(&secret, s));
                }
            }
        }
        let before = detectors_fired.get("USER").and_then(Value::as_u64).unwrap_or(0);
        detectors_fired.insert("USER".into(), Value::from(before + egress.identifiers.len() as u64));
    }
    passthrough.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    if route == Route::ChatCompletions && copy.get("stream") == Some(&Value::Bool(true)) {
        let obj = copy.as_object_mut().expect("object");
        let mut options = match obj.get("stream_options") {
            Some(Value::Object(o)) => o.clone(),
            _ => Map::new(),
        };
        options.insert("include_usage".into(), Value::Bool(true));
        obj.insert("stream_options".into(), Value::Object(options));
    }
    let canonical = canonical_string(&copy).map_err(|e| TokeniseError::InvalidRequestBody(format!("request body cannot be serialised as JSON: {e}")))?;
    Ok(TokenisedRequest {
        body: copy,
        body_bytes: canonical.into_bytes(),
        map: session.map().to_vec(),
        detectors_fired,
        name_model_skipped: session.name_model_skipped,
        passthrough,
    })
}
