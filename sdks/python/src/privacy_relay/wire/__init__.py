"""Wire formats shared with every Privacy Relay SDK: JCS, base64, ES256, hashes (checked by sdks/vectors)."""
