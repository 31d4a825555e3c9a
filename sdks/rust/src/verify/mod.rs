//! Offline verification: receipts (v1, v2, failed, v3 countersignature), v3 attestations, chains,
//! transparency-log inclusion proofs, webhook signatures.
pub mod chain;
pub mod js;
pub mod jwks;
pub mod receipt;
pub mod transparency;
pub mod webhook;

pub use chain::{verify_chain, verify_chain_export, ChainBreak, ChainGap, ChainVerification};
pub use jwks::{Jwks, JwksError, KeyResolver};
pub use receipt::{verify_receipt, VerificationCheck, VerificationResult};
pub use transparency::{verify_consistency_proof, verify_inclusion_proof};
pub use webhook::{verify_webhook, WebhookDeduper, WebhookVerificationError};
