//! Privacy Relay's on-device engine, written once in Rust: structured detectors, the portable name
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

/// SHA-256 over the engine's sources and embedded data: the attestation's `engine.sha256` for this build.
pub const ENGINE_SHA256: &str = env!("PRIVACY_RELAY_CORE_SHA256");

/// This engine's identity for attestations.
pub fn engine_identity() -> attestation::EngineIdentity {
    attestation::EngineIdentity { id: ENGINE_ID.into(), version: ENGINE_VERSION.into(), sha256: ENGINE_SHA256.into() }
}
