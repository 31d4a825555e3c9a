//! Everything that belongs to ONE request: its secret, its aliases, its counters. Never reuse across requests.

use super::phone::{region_id, DEFAULT_PHONE_REGIONS};
use super::types::EntityType;
use super::{alias_regex, tag_from_mac, REQUEST_TAG_LENGTH, STABLE_TAG_LENGTH};
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameModel {
    /// The portable name model (sdks/vectors/name-model.json), on the device.
    Builtin,
    /// No name detection.
    Off,
}

#[derive(Debug, Clone)]
pub struct SessionOptions {
    pub names: NameModel,
    /// The per-request secret the alias tags derive from. Default: 32 fresh random bytes.
    pub secret: Option<Vec<u8>>,
    /// Stable aliases: each alias derived from the value itself under this device-held secret.
    pub stable_alias_secret: Option<Vec<u8>>,
    /// Regions whose national phone formats are recognised (ISO codes); default the engine's list.
    pub phone_regions: Option<Vec<String>>,
    /// The device alias secret of end-user identifiers' `USER_` aliases; default a fresh random one per request.
    pub identifier_secret: Option<Vec<u8>>,
    /// What to do with media the engine cannot read as text (MEDIA_POLICY).
    pub media_policy: MediaPolicy,
    /// JSON pointers (`*` for one segment) of refused or unknown fields to send untokenised (PASSTHROUGH_PATHS).
    pub passthrough_paths: Vec<String>,
}

/// MEDIA_POLICY: refuse (default) | redact (images only) | pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MediaPolicy {
    #[default]
    Refuse,
    Redact,
    Pass,
}

impl MediaPolicy {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "refuse" => Some(MediaPolicy::Refuse),
            "redact" => Some(MediaPolicy::Redact),
            "pass" => Some(MediaPolicy::Pass),
            _ => None,
        }
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            names: NameModel::Builtin,
            secret: None,
            stable_alias_secret: None,
            phone_regions: None,
            identifier_secret: None,
            media_policy: MediaPolicy::Refuse,
            passthrough_paths: Vec::new(),
        }
    }
}

impl SessionOptions {
    pub fn regions(&self) -> Vec<phonenumber::country::Id> {
        match &self.phone_regions {
            Some(list) => list.iter().filter_map(|c| region_id(c)).collect(),
            None => DEFAULT_PHONE_REGIONS.iter().filter_map(|c| region_id(c)).collect(),
        }
    }
}

fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// The per-request alias secret of a call sent with an Idempotency-Key: HMAC-SHA256 of the key under the
/// device-held alias secret (idempotentAliasSecret.ts).
pub fn idempotent_alias_secret(device_secret: &[u8], idempotency_key: &str) -> [u8; 32] {
    hmac(device_secret, format!("privacy-relay idempotent aliases\u{0}{idempotency_key}").as_bytes())
}

pub struct TokeniserSession {
    pub options: SessionOptions,
    secret: Option<Vec<u8>>,
    /// Alias -> original, in the order minted.
    map: Vec<(String, String)>,
    index: HashMap<String, usize>,
    by_value: HashMap<(EntityType, String), String>,
    counters: HashMap<EntityType, usize>,
    fired: Map<String, Value>,
    observed: HashSet<String>,
    pub name_model_skipped: bool,
}

impl TokeniserSession {
    pub fn new(options: SessionOptions) -> Self {
        TokeniserSession {
            secret: options.secret.clone(),
            options,
            map: Vec::new(),
            index: HashMap::new(),
            by_value: HashMap::new(),
            counters: HashMap::new(),
            fired: Map::new(),
            observed: HashSet::new(),
            name_model_skipped: false,
        }
    }

    /// Alias -> original pairs in the order minted. Keep them on the device.
    pub fn map(&self) -> &[(String, String)] {
        &self.map
    }

    pub fn original(&self, alias: &str) -> Option<&str> {
        self.index.get(alias).map(|i| self.map[*i].1.as_str())
    }

    /// Categories and how many values of each were replaced (never the values), in first-seen order.
    pub fn detectors_fired(&self) -> &Map<String, Value> {
        &self.fired
    }

    /// Registers text of this request so that no alias can equal a string already present in it.
    pub fn observe(&mut self, text: &str) {
        if !text.contains('<') {
            return;
        }
        for m in alias_regex().find_iter(text) {
            self.observed.insert(m.as_str().to_string());
        }
    }

    fn request_secret(&mut self) -> Vec<u8> {
        if self.secret.is_none() {
            let mut s = vec![0u8; 32];
            getrandom::getrandom(&mut s).expect("operating system randomness");
            self.secret = Some(s);
        }
        self.secret.clone().unwrap_or_default()
    }

    fn candidate(&mut self, ty: EntityType, index: usize, value: &str, attempt: usize) -> String {
        let t = ty.as_str();
        match self.options.stable_alias_secret.clone() {
            None => {
                let mac = hmac(&self.request_secret(), format!("{t}_{index}#{attempt}").as_bytes());
                format!("<{t}_{index}_{}>", tag_from_mac(&mac, REQUEST_TAG_LENGTH))
            }
            Some(stable) => {
                let message = if attempt == 0 { format!("{t}\u{0}{value}") } else { format!("{t}\u{0}{value}\u{0}{attempt}") };
                format!("<{t}_{}>", tag_from_mac(&hmac(&stable, message.as_bytes()), STABLE_TAG_LENGTH))
            }
        }
    }

    /// The alias of `value` as `ty`; the same pair always gets the same alias within the session.
    pub fn alias_for(&mut self, ty: EntityType, value: &str) -> String {
        let id = (ty, value.to_string());
        if let Some(a) = self.by_value.get(&id) {
            return a.clone();
        }
        let index = self.counters.get(&ty).copied().unwrap_or(0) + 1;
        self.counters.insert(ty, index);
        let mut attempt = 0;
        let alias = loop {
            let alias = self.candidate(ty, index, value, attempt);
            if !self.index.contains_key(&alias) && !self.observed.contains(&alias) {
                break alias;
            }
            attempt += 1;
        };
        self.index.insert(alias.clone(), self.map.len());
        self.map.push((alias.clone(), value.to_string()));
        self.by_value.insert(id, alias.clone());
        alias
    }

    pub fn count_fired(&mut self, ty: EntityType) {
        let entry = self.fired.entry(ty.as_str().to_string()).or_insert(Value::from(0));
        *entry = Value::from(entry.as_u64().unwrap_or(0) + 1);
    }
}
