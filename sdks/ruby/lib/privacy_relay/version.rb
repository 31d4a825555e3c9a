# frozen_string_literal: true

module PrivacyRelay
  VERSION = "0.1.0"
  # The engine id this SDK names in its attestations.
  ENGINE_ID = "relay-rb"
end
