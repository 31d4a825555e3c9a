# frozen_string_literal: true

require_relative "privacy_relay/version"
require_relative "privacy_relay/errors"
require_relative "privacy_relay/native"
require_relative "privacy_relay/device"
require_relative "privacy_relay/engine"
require_relative "privacy_relay/json_restore"
require_relative "privacy_relay/sse"
require_relative "privacy_relay/transport"
require_relative "privacy_relay/client"

# Privacy Relay for Ruby: a binding to the shared on-device engine (C ABI, library privacy_relay) plus an
# idiomatic HTTP client. See README.md.
module PrivacyRelay
  module_function

  # Offline verification of a receipt against a JWKS: {"valid", "reason", "checks"}. attestation: for a v3
  # countersignature, the attestation sent (answer.attestation), to check it binds that one; previous: the receipt
  # before this one in its chain, to check the link.
  def verify_receipt(receipt, jwks, now_seconds: nil, attestation: nil, previous: nil)
    options = { "now_seconds" => now_seconds, "attestation" => attestation, "previous" => previous }.compact
    Native.verify_receipt(receipt, jwks, options.empty? ? nil : options)
  end

  # A chain of receipts in chain order: {"valid", "chain_id", "first_seq", "last_seq", "verified", "break", "gaps"};
  # the break names its kind (gap, reorder, duplicate, substituted, other_chain, tampered, invalid, unchained).
  # allow_gaps: missing receipts (a partial export) are listed in "gaps" instead of breaking the chain.
  def verify_chain(receipts, jwks, now_seconds: nil, allow_gaps: false)
    Native.verify_chain(receipts, jwks, chain_options(now_seconds, allow_gaps))
  end

  # An export of receipt chains (the receipt_chain_export answer as a Hash or JSON text, its JSON Lines text, or an
  # Array of receipts): {"valid", "chains" => [as verify_chain, with "chain_id" and "count"]}.
  def verify_chain_export(exported, jwks, now_seconds: nil, allow_gaps: false)
    Native.verify_chain_export(exported, jwks, chain_options(now_seconds, allow_gaps))
  end

  # A transparency-log consistency proof (client.rest.receipts.consistency_proof(old_head["tree_size"])): the log
  # whose signed head you kept (old_head) is a prefix of the newer one (new_head; nil: the proof's own sth), both
  # heads signed by the gateway's keys. {"valid", "reason", "checks"}; a fork or a rollback is valid: false.
  def verify_consistency_proof(proof, old_head, jwks, new_head: nil)
    Native.verify_consistency_proof(proof, old_head, jwks, new_head ? { "new_head" => new_head } : nil)
  end

  def chain_options(now_seconds, allow_gaps)
    options = {}
    options["now_seconds"] = now_seconds if now_seconds
    options["allow_gaps"] = true if allow_gaps
    options
  end
  private_class_method :chain_options

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
