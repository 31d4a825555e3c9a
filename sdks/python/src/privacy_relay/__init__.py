"""Privacy Relay SDK."""
