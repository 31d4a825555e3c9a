//! The egress policy (sdks/vectors/egress-policy.json, read at build time from its one location; grammar in
//! sdks/vectors/README.md "Egress policy"): every field and content-part type of each client route classified as
//! user text, an end-user identifier, structure, media or refused. The engine walks a body with it before anything
//! leaves the device; anything the policy does not name is refused. The same walk as the TypeScript engine's
//! (sdks/typescript/src/wire/egressPolicy.ts) and the Python one's, held to sdks/vectors/egress-policy-cases.json.

use super::request::Seg;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

const POLICY_JSON: &str = include_str!("../../../vectors/egress-policy.json");

/// Objects and arrays a body may nest, counted from the body itself.
pub const MAX_EGRESS_DEPTH: usize = 64;

/// A refusal: nothing may be sent. `code`: unsupported_field (400), unsupported_content (415) or
/// nesting_too_deep (400). Messages name paths, JSON types and part types, never values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRefusal {
    pub code: &'static str,
    pub path: String,
    pub message: String,
    pub kind: Option<String>,
}

impl EgressRefusal {
    pub fn status(&self) -> u16 {
        if self.code == "unsupported_content" {
            415
        } else {
            400
        }
    }
    /// The setting that would let the value through, named in the error's details.
    pub fn setting(&self) -> Option<&'static str> {
        match self.code {
            "unsupported_field" => Some("PASSTHROUGH_PATHS"),
            "unsupported_content" => Some("MEDIA_POLICY"),
            _ => None,
        }
    }
    pub fn details(&self) -> Value {
        let mut d = serde_json::Map::new();
        d.insert("path".into(), self.path.clone().into());
        if let Some(k) = &self.kind {
            d.insert("kind".into(), k.clone().into());
        }
        if let Some(s) = self.setting() {
            d.insert("setting".into(), s.into());
        }
        Value::Object(d)
    }
}

#[derive(Debug)]
enum Node {
    Pass,
    Tokenise,
    Stable,
    Refuse,
    Object { members: HashMap<String, usize>, other: Option<usize> },
    Array(usize),
    ByType(HashMap<String, usize>),
    Tagged { field: String, variants: HashMap<String, usize>, absent: Option<String> },
    JsonText,
    Media(String),
    Ref(usize),
}

struct Policy {
    nodes: Vec<Node>,
    routes: HashMap<String, usize>,
}

fn compile(policy: &Value) -> Result<Policy, String> {
    struct C<'p> {
        defs: &'p serde_json::Map<String, Value>,
        nodes: Vec<Node>,
        by_def: HashMap<String, usize>,
    }
    impl<'p> C<'p> {
        fn node(&mut self, raw: &'p Value, at: &str) -> Result<usize, String> {
            if let Some(name) = raw.get("ref").and_then(Value::as_str) {
                if let Some(i) = self.by_def.get(name) {
                    return Ok(*i);
                }
                let def = self.defs.get(name).ok_or_else(|| format!("egress policy: unknown definition {name} at {at}"))?;
                // Reserve the slot before filling it: a definition may refer to itself.
                let i = self.nodes.len();
                self.nodes.push(Node::Pass);
                self.by_def.insert(name.to_string(), i);
                let filled = self.build(def, name)?;
                self.nodes[i] = filled;
                return Ok(i);
            }
            let n = self.build(raw, at)?;
            self.nodes.push(n);
            Ok(self.nodes.len() - 1)
        }
        fn build(&mut self, raw: &'p Value, at: &str) -> Result<Node, String> {
            if let Some(s) = raw.as_str() {
                return match s {
                    "pass" => Ok(Node::Pass),
                    "tokenise" => Ok(Node::Tokenise),
                    "tokenise-stable" => Ok(Node::Stable),
                    "refuse" => Ok(Node::Refuse),
                    other => Err(format!("egress policy: unknown leaf {other:?} at {at}")),
                };
            }
            let o = raw.as_object().ok_or_else(|| format!("egress policy: malformed node at {at}"))?;
            if o.contains_key("ref") {
                // A definition that is another definition: the walk follows the reference.
                return Ok(Node::Ref(self.node(raw, at)?));
            }
            if let Some(Value::Object(types)) = o.get("byType") {
                let mut m = HashMap::new();
                for (t, n) in types {
                    m.insert(t.clone(), self.node(n, &format!("{at}/{t}"))?);
                }
                return Ok(Node::ByType(m));
            }
            if let Some(Value::Object(members)) = o.get("object") {
                let mut m = HashMap::new();
                for (name, n) in members {
                    m.insert(name.clone(), self.node(n, &format!("{at}/{name}"))?);
                }
                let other = match o.get("other") {
                    Some(n) => Some(self.node(n, &format!("{at}/*"))?),
                    None => None,
                };
                return Ok(Node::Object { members: m, other });
            }
            if let Some(item) = o.get("array") {
                return Ok(Node::Array(self.node(item, &format!("{at}/*"))?));
            }
            if let Some(Value::String(field)) = o.get("tagged") {
                let mut v = HashMap::new();
                for (name, n) in o.get("variants").and_then(Value::as_object).ok_or_else(|| format!("egress policy: variants at {at}"))? {
                    v.insert(name.clone(), self.node(n, &format!("{at}/{name}"))?);
                }
                return Ok(Node::Tagged { field: field.clone(), variants: v, absent: o.get("absent").and_then(Value::as_str).map(str::to_string) });
            }
            if o.contains_key("jsonText") {
                return Ok(Node::JsonText);
            }
            if let Some(Value::String(kind)) = o.get("media") {
                return Ok(Node::Media(kind.clone()));
            }
            Err(format!("egress policy: malformed node at {at}"))
        }
    }
    let defs = policy.get("definitions").and_then(Value::as_object).ok_or("egress policy: no definitions")?;
    let mut c = C { defs, nodes: Vec::new(), by_def: HashMap::new() };
    let mut routes = HashMap::new();
    for (route, raw) in policy.get("routes").and_then(Value::as_object).ok_or("egress policy: no routes")? {
        let i = c.node(raw, route)?;
        routes.insert(route.clone(), i);
    }
    Ok(Policy { nodes: c.nodes, routes })
}

fn policy() -> &'static Policy {
    static CELL: OnceLock<Policy> = OnceLock::new();
    CELL.get_or_init(|| {
        let raw: Value = serde_json::from_str(POLICY_JSON).expect("egress-policy.json is JSON");
        compile(&raw).expect("egress-policy.json compiles")
    })
}

/// The routes the policy classifies.
pub fn egress_routes() -> Vec<String> {
    let mut r: Vec<String> = policy().routes.keys().cloned().collect();
    r.sort();
    r
}

/// The policy's version and the SHA-256 of its bytes, for engine_info.
pub fn policy_identity() -> (u64, String) {
    let raw: Value = serde_json::from_str(POLICY_JSON).unwrap_or(Value::Null);
    (raw.get("version").and_then(Value::as_u64).unwrap_or(0), crate::wire::hashing::sha256_hex(POLICY_JSON.as_bytes()))
}

pub fn escape_segment(s: &Seg) -> String {
    match s {
        Seg::Key(k) => k.replace('~', "~0").replace('/', "~1"),
        Seg::Index(i) => i.to_string(),
    }
}

pub fn pointer(path: &[Seg]) -> String {
    path.iter().map(|s| format!("/{}", escape_segment(s))).collect()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn with(path: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(seg);
    p
}

/// Refuses a body nested deeper than MAX_EGRESS_DEPTH levels, without recursion; depth first with children pushed in
/// order and taken from the end, so the path reported is the reference engine's.
pub fn check_egress_depth(body: &Value) -> Result<(), EgressRefusal> {
    if !matches!(body, Value::Object(_) | Value::Array(_)) {
        return Ok(());
    }
    let mut stack: Vec<(&Value, usize, Vec<Seg>)> = vec![(body, 1, Vec::new())];
    while let Some((value, depth, path)) = stack.pop() {
        if depth > MAX_EGRESS_DEPTH {
            let p = pointer(&path);
            return Err(EgressRefusal {
                code: "nesting_too_deep",
                message: format!("The request nests deeper than {MAX_EGRESS_DEPTH} levels at {p}; nothing was sent."),
                path: p,
                kind: None,
            });
        }
        match value {
            Value::Object(m) => {
                for (k, v) in m {
                    if matches!(v, Value::Object(_) | Value::Array(_)) {
                        stack.push((v, depth + 1, with(&path, Seg::Key(k.clone()))));
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    if matches!(v, Value::Object(_) | Value::Array(_)) {
                        stack.push((v, depth + 1, with(&path, Seg::Index(i))));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What one walk found: the places to tokenise, the identifiers, the media, and what passthrough let through.
#[derive(Debug, Default)]
pub struct EgressWalk {
    /// (path, holds JSON text) of user-text strings, in document order.
    pub texts: Vec<(Vec<Seg>, bool)>,
    /// End-user identifier strings (device-stable USER_ aliases), in document order.
    pub identifiers: Vec<Vec<Seg>>,
    /// (path, kind) of media values.
    pub media: Vec<(Vec<Seg>, String)>,
    /// { path, kind } entries of what passthrough patterns let through.
    pub passthrough: Vec<(String, String)>,
}

struct Walker<'a> {
    nodes: &'a [Node],
    patterns: Vec<Vec<String>>,
    walk: EgressWalk,
}

impl Walker<'_> {
    fn matches(&self, path: &str) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let segs: Vec<&str> = if path.is_empty() { Vec::new() } else { path.split('/').skip(1).collect() };
        self.patterns.iter().any(|p| p.len() == segs.len() && p.iter().zip(&segs).all(|(a, b)| a == "*" || a == b))
    }

    fn refuse(&mut self, path: &[Seg], what: String) -> Result<(), EgressRefusal> {
        let p = pointer(path);
        if self.matches(&p) {
            self.walk.passthrough.push((p, "field".into()));
            return Ok(());
        }
        let at = if p.is_empty() { "the body".to_string() } else { p.clone() };
        Err(EgressRefusal {
            code: "unsupported_field",
            message: format!(
                "{what} at {at} is not sent: the egress policy does not allow it (fail-closed). Nothing was sent. To send it untokenised, name its path in passthrough_paths (PASSTHROUGH_PATHS)."
            ),
            path: p,
            kind: None,
        })
    }

    fn strings(value: &Value, path: Vec<Seg>, into: &mut Vec<Vec<Seg>>) {
        match value {
            Value::String(_) => into.push(path),
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    Self::strings(v, with(&path, Seg::Index(i)), into);
                }
            }
            Value::Object(m) => {
                for (k, v) in m {
                    Self::strings(v, with(&path, Seg::Key(k.clone())), into);
                }
            }
            _ => {}
        }
    }

    fn visit(&mut self, node: usize, value: &Value, path: Vec<Seg>) -> Result<(), EgressRefusal> {
        if value.is_null() {
            return Ok(());
        }
        match &self.nodes[node] {
            Node::Pass => Ok(()),
            Node::Tokenise => {
                let mut found = Vec::new();
                Self::strings(value, path, &mut found);
                self.walk.texts.extend(found.into_iter().map(|p| (p, false)));
                Ok(())
            }
            Node::Stable => {
                let mut found = Vec::new();
                Self::strings(value, path, &mut found);
                self.walk.identifiers.extend(found);
                Ok(())
            }
            Node::Refuse => self.refuse(&path, "This field".into()),
            Node::Object { members, other } => {
                let Value::Object(m) = value else {
                    return self.refuse(&path, format!("A value of type {} (an object was expected)", json_type(value)));
                };
                let (members, other) = (members.clone(), *other);
                for (name, v) in m {
                    let p = with(&path, Seg::Key(name.clone()));
                    match members.get(name).copied().or(other) {
                        None => self.refuse(&p, format!("The field {}", Value::String(name.clone())))?,
                        Some(n) => self.visit(n, v, p)?,
                    }
                }
                Ok(())
            }
            Node::Tagged { field, variants, absent } => {
                if !value.is_object() {
                    return self.refuse(&path, format!("A value of type {} (an object was expected)", json_type(value)));
                }
                let variant: Option<Value> = match (value.get(field), absent) {
                    (None, Some(a)) => Some(Value::String(a.clone())),
                    (v, _) => v.cloned(),
                };
                let chosen = variant.as_ref().and_then(Value::as_str).and_then(|v| variants.get(v)).copied();
                match chosen {
                    Some(n) => self.visit(n, value, path),
                    None => {
                        let what = match &variant {
                            Some(Value::String(s)) => format!("A part of {field} {}", Value::String(s.clone())),
                            _ => format!("A part without a string {field}"),
                        };
                        self.refuse(&path, what)
                    }
                }
            }
            Node::ByType(types) => match types.get(json_type(value)).copied() {
                Some(n) => self.visit(n, value, path),
                None => self.refuse(&path, format!("A value of type {}", json_type(value))),
            },
            Node::Array(item) => {
                let item = *item;
                let Value::Array(items) = value else {
                    return self.refuse(&path, format!("A value of type {} (an array was expected)", json_type(value)));
                };
                for (i, v) in items.iter().enumerate() {
                    self.visit(item, v, with(&path, Seg::Index(i)))?;
                }
                Ok(())
            }
            Node::JsonText => {
                if value.is_string() {
                    self.walk.texts.push((path, true));
                } else {
                    let mut found = Vec::new();
                    Self::strings(value, path, &mut found);
                    self.walk.texts.extend(found.into_iter().map(|p| (p, false)));
                }
                Ok(())
            }
            Node::Media(kind) => {
                self.walk.media.push((path, kind.clone()));
                Ok(())
            }
            Node::Ref(n) => self.visit(*n, value, path),
        }
    }
}

/// Walks `body` with the route's policy (call check_egress_depth first). Errs at the first member or variant the
/// policy refuses or does not name (unless a passthrough pattern matches its path) and at a value of a JSON type
/// the policy does not expect.
pub fn walk_egress(route: &str, body: &Value, passthrough_paths: &[String]) -> Result<EgressWalk, EgressRefusal> {
    let p = policy();
    let Some(&root) = p.routes.get(route) else {
        return Err(EgressRefusal {
            code: "unsupported_field",
            path: String::new(),
            message: format!("The egress policy has no route {}; nothing was sent.", Value::String(route.into())),
            kind: None,
        });
    };
    let patterns = passthrough_paths.iter().map(|s| if s.is_empty() { Vec::new() } else { s.split('/').skip(1).map(str::to_string).collect() }).collect();
    let mut w = Walker { nodes: &p.nodes, patterns, walk: EgressWalk::default() };
    w.visit(root, body, Vec::new())?;
    Ok(w.walk)
}
