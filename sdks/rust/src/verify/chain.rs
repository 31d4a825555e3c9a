//! Verification of an exported chain of receipts in chain order: every receipt verified and linked to the one
//! before it, so a gap, a reordering, a receipt of another chain, a changed or re-signed receipt is found.

use super::js::{js_string, num};
use super::jwks::{JwksError, KeyResolver};
use super::receipt::{decode_envelope_input, verify_receipt, VerificationResult};
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct ChainBreak {
    pub index: usize,
    pub seq: Option<f64>,
    pub jti: Option<String>,
    pub reason: String,
    pub result: VerificationResult,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChainVerification {
    pub valid: bool,
    pub chain_id: Option<String>,
    pub first_seq: Option<f64>,
    pub last_seq: Option<f64>,
    pub verified: usize,
    pub break_: Option<ChainBreak>,
}

impl ChainVerification {
    pub fn to_json(&self) -> Value {
        json!({
            "valid": self.valid,
            "chain_id": self.chain_id,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "verified": self.verified,
            "break": self.break_.as_ref().map(|b| json!({
                "index": b.index, "seq": b.seq, "jti": b.jti, "reason": b.reason, "result": b.result.to_json()
            }))
        })
    }
}

fn seq_of(envelope: Option<&Value>) -> Option<f64> {
    num(envelope?.get("chain")?.get("seq"))
}

/// Verifies receipts of ONE chain given in chain order; stops at the first break and reports it.
pub fn verify_chain(receipts: &[Value], resolver: &dyn KeyResolver, now_seconds: f64) -> Result<ChainVerification, JwksError> {
    let envelopes: Vec<Value> = receipts.iter().map(|r| decode_envelope_input(r).unwrap_or_else(|_| r.clone())).collect();
    let first = envelopes.first();
    let chain_id = first.and_then(|f| f.get("chain")).and_then(|c| c.get("chain_id")).and_then(Value::as_str).map(str::to_string);
    let first_seq = seq_of(first);
    let last_seq = seq_of(envelopes.last());
    for (index, envelope) in envelopes.iter().enumerate() {
        let previous = if index == 0 { None } else { Some(&envelopes[index - 1]) };
        let result = verify_receipt(&receipts[index], resolver, now_seconds, previous, None)?;
        let unchained = result.valid && !envelope.get("chain").map_or(false, Value::is_object);
        if !result.valid || unchained {
            let reason = if unchained {
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
                break_: Some(ChainBreak { index, seq: seq_of(Some(envelope)), jti, reason, result }),
            });
        }
    }
    Ok(ChainVerification { valid: true, chain_id, first_seq, last_seq, verified: envelopes.len(), break_: None })
}
