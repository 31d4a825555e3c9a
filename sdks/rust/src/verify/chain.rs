//! Verification of an exported chain of receipts in chain order: every receipt verified and linked to the one
//! before it, so a gap, a reordering, a receipt of another chain, a changed or a substituted receipt is found, with
//! its position and its kind; and of what receipt_chain_export writes (or JSON Lines, or a list). Kinds, reasons and
//! positions are the TypeScript SDK's (sdks/vectors/receipts.json `chains` and `chain_exports`).

use super::js::{is_number, js_number, js_string, num};
use super::jwks::{JwksError, KeyResolver};
use super::receipt::{decode_envelope_input, verify_receipt, VerificationResult};
use serde_json::{json, Value};

/// gap, reorder, duplicate, substituted, other_chain, tampered, invalid, unchained.
pub const CHAIN_BREAK_KINDS: [&str; 8] = ["gap", "reorder", "duplicate", "substituted", "other_chain", "tampered", "invalid", "unchained"];

#[derive(Debug, Clone, PartialEq)]
pub struct ChainBreak {
    pub index: usize,
    pub seq: Option<f64>,
    pub jti: Option<String>,
    pub kind: &'static str,
    pub reason: String,
    pub result: VerificationResult,
}

/// Receipts missing between two in the list (only with allow_gaps): seq after_seq + 1 to seq - 1.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainGap {
    pub index: usize,
    pub after_seq: f64,
    pub seq: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChainVerification {
    pub valid: bool,
    pub chain_id: Option<String>,
    pub first_seq: Option<f64>,
    pub last_seq: Option<f64>,
    pub verified: usize,
    pub break_: Option<ChainBreak>,
    pub gaps: Vec<ChainGap>,
    pub count: usize,
}

impl ChainVerification {
    pub fn to_json(&self) -> Value {
        json!({
            "valid": self.valid,
            "chain_id": self.chain_id,
            "first_seq": self.first_seq.map(js_number),
            "last_seq": self.last_seq.map(js_number),
            "count": self.count,
            "verified": self.verified,
            "break": self.break_.as_ref().map(|b| json!({
                "index": b.index, "seq": b.seq.map(js_number), "jti": b.jti, "kind": b.kind, "reason": b.reason, "result": b.result.to_json()
            })),
            "gaps": self.gaps.iter().map(|g| json!({"index": g.index, "after_seq": js_number(g.after_seq), "seq": js_number(g.seq)})).collect::<Vec<_>>()
        })
    }
}

fn chain_of(envelope: &Value) -> Option<&Value> {
    envelope.get("chain").filter(|c| c.is_object() && envelope.is_object())
}

fn seq_of(envelope: Option<&Value>) -> Option<f64> {
    envelope.and_then(chain_of).and_then(|c| num(c.get("seq")))
}

fn link_kind(envelopes: &[Value], index: usize) -> &'static str {
    let (Some(before), Some(here)) = (chain_of(&envelopes[index - 1]), chain_of(&envelopes[index])) else { return "invalid" };
    if before.get("chain_id") != here.get("chain_id") {
        return "other_chain";
    }
    let (Some(b), Some(h)) = (num(before.get("seq")), num(here.get("seq"))) else { return "invalid" };
    if h == b {
        return "duplicate";
    }
    if h < b {
        return "reorder";
    }
    if h > b + 1.0 {
        for later in &envelopes[index + 1..] {
            if let Some(seq) = seq_of(Some(later)) {
                if b < seq && seq < h && chain_of(later).and_then(|c| c.get("chain_id")) == here.get("chain_id") {
                    return "reorder";
                }
            }
        }
        return "gap";
    }
    "substituted"
}

fn is_link_failure(detail: &str) -> bool {
    let follows = detail.strip_prefix("seq ").and_then(|r| {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| r[digits..].starts_with(" does not follow previous seq "))
    });
    follows == Some(true) || detail == "previous receipt belongs to another chain" || detail == "prev_hash is not the hash of the previous receipt"
}

fn kind_of(result: &VerificationResult, envelopes: &[Value], index: usize) -> &'static str {
    match result.checks.iter().find(|c| c.status == "fail") {
        Some(c) if c.label == "signature" => "tampered",
        Some(c) if c.label == "chain linkage (seq and prev_hash)" && index > 0 && is_link_failure(&c.detail) => link_kind(envelopes, index),
        _ => "invalid",
    }
}

/// Verifies receipts of ONE chain given in chain order; stops at the first break and reports it, named. With
/// `allow_gaps` (the receipts one client holds of a chain other clients also write to), a receipt after a gap is
/// verified on its own and the gap listed.
pub fn verify_chain(receipts: &[Value], resolver: &dyn KeyResolver, now_seconds: f64, allow_gaps: bool) -> Result<ChainVerification, JwksError> {
    let envelopes: Vec<Value> = receipts.iter().map(|r| decode_envelope_input(r).unwrap_or_else(|_| r.clone())).collect();
    let first = envelopes.first();
    let chain_id = first.and_then(chain_of).and_then(|c| c.get("chain_id")).and_then(Value::as_str).map(str::to_string);
    let first_seq = seq_of(first);
    let last_seq = seq_of(envelopes.last());
    let mut gaps = Vec::new();
    let verify = |index: usize, linked: bool| {
        let previous = if index == 0 || !linked { None } else { Some(&envelopes[index - 1]) };
        verify_receipt(&receipts[index], resolver, now_seconds, previous, None)
    };
    for (index, envelope) in envelopes.iter().enumerate() {
        let mut result = verify(index, true)?;
        let mut kind = if result.valid { None } else { Some(kind_of(&result, &envelopes, index)) };
        if kind == Some("gap") && allow_gaps {
            gaps.push(ChainGap { index, after_seq: seq_of(Some(&envelopes[index - 1])).unwrap_or(0.0), seq: seq_of(Some(envelope)).unwrap_or(0.0) });
            result = verify(index, false)?;
            kind = if result.valid { None } else { Some(kind_of(&result, &envelopes, index)) };
        }
        if kind.is_none() && chain_of(envelope).is_none() {
            kind = Some("unchained");
        }
        if let Some(kind) = kind {
            let reason = if kind == "unchained" {
                format!("a {} envelope is not part of a receipt chain", js_string(envelope.get("v")))
            } else {
                result.reason.clone().unwrap_or_default()
            };
            let jti = envelope.get("jti").and_then(Value::as_str).map(str::to_string);
            return Ok(ChainVerification {
                valid: false,
                chain_id,
                first_seq,
                last_seq,
                verified: index,
                break_: Some(ChainBreak { index, seq: seq_of(Some(envelope)), jti, kind, reason, result }),
                gaps,
                count: envelopes.len(),
            });
        }
    }
    Ok(ChainVerification { valid: true, chain_id, first_seq, last_seq, verified: envelopes.len(), break_: None, gaps, count: envelopes.len() })
}

/// The receipts of an export grouped by chain in their order: receipt_chain_export's output (the object, or its JSON
/// text: {"chains": [{"chain_id", "receipts"}]}), its JSON Lines text, or a list of receipts.
pub fn chains_of_export(exported: &Value) -> Result<Vec<(Option<String>, Vec<Value>)>, String> {
    let mut value = exported.clone();
    if let Value::String(text) = exported {
        let text = text.trim();
        match serde_json::from_str::<Value>(text) {
            Ok(parsed @ Value::Array(_)) => value = parsed,
            Ok(parsed) if parsed.get("chains").map_or(false, Value::is_array) => value = parsed,
            _ => value = Value::Array(text.split('\n').map(str::trim).filter(|l| !l.is_empty()).map(|l| Value::String(l.to_string())).collect()),
        }
    }
    if let Some(Value::Array(chains)) = value.get("chains").filter(|_| value.is_object()) {
        let mut out = Vec::new();
        for entry in chains {
            let Some(Value::Array(receipts)) = entry.get("receipts").filter(|_| entry.is_object()) else {
                return Err("verify_chain_export: every entry of chains needs a receipts list".into());
            };
            out.push((entry.get("chain_id").and_then(Value::as_str).map(str::to_string), receipts.clone()));
        }
        return Ok(out);
    }
    let Value::Array(items) = value else {
        return Err("verify_chain_export: give receipt_chain_export's output (object or JSON), its jsonl text, or a list of receipts".into());
    };
    let mut groups: Vec<(Option<String>, Vec<Value>)> = Vec::new();
    for receipt in items {
        let key = decode_envelope_input(&receipt)
            .ok()
            .and_then(|d| chain_of(&d).and_then(|c| c.get("chain_id")).and_then(Value::as_str).map(str::to_string));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(receipt),
            None => groups.push((key, vec![receipt])),
        }
    }
    Ok(groups)
}

/// Verifies an exported set of chains offline, each with verify_chain in the export's order.
pub fn verify_chain_export(exported: &Value, resolver: &dyn KeyResolver, now_seconds: f64, allow_gaps: bool) -> Result<Result<(bool, Vec<ChainVerification>), String>, JwksError> {
    let groups = match chains_of_export(exported) {
        Ok(g) => g,
        Err(e) => return Ok(Err(e)),
    };
    let mut chains = Vec::new();
    for (_, receipts) in groups {
        chains.push(verify_chain(&receipts, resolver, now_seconds, allow_gaps)?);
    }
    Ok(Ok((chains.iter().all(|c| c.valid), chains)))
}

/// `is_number` re-exported for callers classifying seqs.
pub fn is_seq(v: Option<&Value>) -> bool {
    is_number(v)
}
