//! Privacy Relay's on-device engine, written once in Rust: structured detectors, the gazetteer-and-rules name
//! model, aliases, the streaming detokeniser, request tokenisation, v3 attestation building and signing, JCS,
//! and offline verification of receipts (v1, v2, v3, failed), chains, transparency proofs and webhooks.
//! Every wire format is held to `sdks/vectors` byte for byte.

pub mod attestation;
pub mod verify;
pub mod wire;

/// The engine id this crate reports (`X-Service-Engine: relay-rs/<version>`).
pub const ENGINE_ID: &str = "relay-rs";
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
pub mod tokeniser;
