"""Offline verification: receipts (v1, v2, failed, v3 countersignature, v3 attestation), chains, transparency
inclusion proofs and webhook deliveries. Results and reason strings are those of every other SDK."""
