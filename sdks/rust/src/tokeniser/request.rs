//! tokeniseRequest: the user text of one OpenAI chat completions, Anthropic messages or embeddings request is
//! tokenised; every other field is left as it is; the bytes to send are the JCS text of the result.
//!
//! Which fields hold user text is decided by ONE function, `text_slots` (the field walk), so that the egress
//! policy data file (sdks/vectors/egress-policy.json) can replace it without touching the rest.

use super::session::{SessionOptions, TokeniserSession};
use super::tokenise_text;
use crate::wire::jcs::{canonical_string, js_stringify};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    ChatCompletions,
    Messages,
    Embeddings,
}

impl Route {
    pub fn parse(name: &str) -> Option<Route> {
        match name {
            "chat.completions" => Some(Route::ChatCompletions),
            "messages" => Some(Route::Messages),
            "embeddings" => Some(Route::Embeddings),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Route::ChatCompletions => "chat.completions",
            Route::Messages => "messages",
            Route::Embeddings => "embeddings",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokeniseError {
    /// 400 invalid_request: the body is not what the route takes.
    InvalidRequestBody(String),
    /// 400 unsupported_field: a field the egress policy does not name (details.path is a JSON pointer).
    UnsupportedField { path: String, message: String },
}

impl TokeniseError {
    pub fn code(&self) -> &'static str {
        match self {
            TokeniseError::InvalidRequestBody(_) => "invalid_request",
            TokeniseError::UnsupportedField { .. } => "unsupported_field",
        }
    }
    pub fn message(&self) -> String {
        match self {
            TokeniseError::InvalidRequestBody(m) => m.clone(),
            TokeniseError::UnsupportedField { message, .. } => message.clone(),
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
    fn leaf_slots(&mut self, body: &Value, path: Vec<Seg>) {
        if let Some(v) = get(body, &path) {
            if !v.is_string() {
                let mut leaves = Vec::new();
                leaf_paths(v, path, &mut leaves);
                self.slots.extend(leaves.into_iter().map(Slot::Text));
            }
        }
    }

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

    fn content_slots(&mut self, body: &Value, path: Vec<Seg>) {
        match get(body, &path) {
            Some(Value::String(_)) => self.slots.push(Slot::Text(path)),
            Some(Value::Array(parts)) => {
                for (i, part) in parts.iter().enumerate() {
                    if !part.is_object() {
                        continue;
                    }
                    let p = with(&path, Seg::Index(i));
                    let ty = part.get("type").and_then(Value::as_str);
                    if ty == Some("text") && part.get("text").map_or(false, Value::is_string) {
                        self.slots.push(Slot::Text(with(&p, Seg::Key("text".into()))));
                    }
                    if ty == Some("tool_result") {
                        self.content_slots(body, with(&p, Seg::Key("content".into())));
                    }
                    if ty == Some("tool_use") {
                        let input = with(&p, Seg::Key("input".into()));
                        if get(body, &input).is_some() {
                            self.leaf_slots(body, input);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn message_slots(&mut self, body: &Value, path: Vec<Seg>) {
        let m = get(body, &path).cloned().unwrap_or(Value::Null);
        self.content_slots(body, with(&path, Seg::Key("content".into())));
        if let Some(Value::Array(calls)) = m.get("tool_calls") {
            for (i, call) in calls.iter().enumerate() {
                if call.is_object() && call.get("function").map_or(false, Value::is_object) {
                    let p = with(&with(&with(&path, Seg::Key("tool_calls".into())), Seg::Index(i)), Seg::Key("function".into()));
                    self.json_text_slots(body, with(&p, Seg::Key("arguments".into())));
                }
            }
        }
        if m.get("function_call").map_or(false, Value::is_object) {
            let p = with(&path, Seg::Key("function_call".into()));
            self.json_text_slots(body, with(&p, Seg::Key("arguments".into())));
        }
    }

    fn messages_slots(&mut self, body: &Value) -> Result<(), TokeniseError> {
        let Some(Value::Array(messages)) = body.get("messages") else {
            return Err(TokeniseError::InvalidRequestBody("messages must be an array".into()));
        };
        for (i, m) in messages.iter().enumerate() {
            if m.is_object() {
                self.message_slots(body, vec![Seg::Key("messages".into()), Seg::Index(i)]);
            }
        }
        Ok(())
    }
}

/// The field walk: which places of `body` hold user text for `route`, in reading order. The one function the
/// egress policy replaces.
pub fn text_slots(route: Route, body: &Value) -> Result<Walk, TokeniseError> {
    let mut walk = Walk::default();
    match route {
        Route::ChatCompletions => walk.messages_slots(body)?,
        Route::Messages => {
            walk.content_slots(body, vec![Seg::Key("system".into())]);
            walk.messages_slots(body)?;
        }
        Route::Embeddings => match body.get("input") {
            Some(Value::String(_)) => walk.slots.push(Slot::Text(vec![Seg::Key("input".into())])),
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if item.is_string() {
                        walk.slots.push(Slot::Text(vec![Seg::Key("input".into()), Seg::Index(i)]));
                    }
                }
            }
            _ => {}
        },
    }
    Ok(walk)
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
    let mut copy = body.clone();
    let mut walk = text_slots(route, &copy)?;
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
        let tokenised = tokenise_text(text, session);
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
        detectors_fired: session.detectors_fired().clone(),
        name_model_skipped: session.name_model_skipped,
    })
}
