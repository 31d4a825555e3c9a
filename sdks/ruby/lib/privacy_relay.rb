# frozen_string_literal: true

require_relative "privacy_relay/version"
require_relative "privacy_relay/errors"
require_relative "privacy_relay/native"
require_relative "privacy_relay/device"
require_relative "privacy_relay/engine"
require_relative "privacy_relay/sse"
require_relative "privacy_relay/transport"
require_relative "privacy_relay/client"

# Privacy Relay for Ruby: a binding to the shared on-device engine (C ABI, library privacy_relay) plus an
# idiomatic HTTP client. See README.md.
module PrivacyRelay
  module_function

  # Offline verification of a receipt against a JWKS: {"valid", "reason", "checks"}.
  def verify_receipt(receipt, jwks, now_seconds: nil)
    Native.verify_receipt(receipt, jwks, now_seconds ? { "now_seconds" => now_seconds } : nil)
  end

  # A chain of receipts in chain order: {"valid", "chain_id", "first_seq", "last_seq", "verified", "break"}.
  def verify_chain(receipts, jwks, now_seconds: nil)
    Native.verify_chain(receipts, jwks, now_seconds ? { "now_seconds" => now_seconds } : nil)
  end

  # A transparency-log inclusion proof (client.rest.receipts.inclusion_proof) against a signed tree head (nil: the
  # proof's own), optionally bound to the receipt: {"valid", "reason", "checks"}.
  def verify_inclusion_proof(proof, sth, jwks, receipt: nil)
    Native.verify_inclusion_proof(proof, sth, jwks, receipt ? { "receipt" => receipt } : nil)
  end

  # A webhook delivery (body exactly as received): {"ok" => true} or {"ok" => false, "code", "message"}.
  def verify_webhook(body, headers, secret, tolerance_seconds: 300, now_seconds: nil)
    options = { "tolerance_seconds" => tolerance_seconds }
    options["now_seconds"] = now_seconds if now_seconds
    Native.verify_webhook(body, headers, secret, options)
  end
end
