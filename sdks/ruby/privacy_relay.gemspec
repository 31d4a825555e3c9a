# frozen_string_literal: true

require_relative "lib/privacy_relay/version"

Gem::Specification.new do |spec|
  spec.name = "privacy_relay"
  spec.version = PrivacyRelay::VERSION
  spec.summary = "Privacy Relay client: on-device tokenisation and attestation by the shared engine, then the gateway"
  spec.description = "Binds the Privacy Relay engine (Rust, C ABI library privacy_relay) with Fiddle and relays " \
                     "chat completions, messages and embeddings through a Privacy Relay gateway with originals restored on the device."
  spec.authors = ["Privacy Relay"]
  spec.license = "Apache-2.0"
  spec.required_ruby_version = ">= 3.1"
  spec.require_paths = ["lib"]
  # No runtime dependencies: Fiddle, Net::HTTP and JSON are Ruby's standard library.
  # The engine library: when sdks/ruby/ci.sh (or you) copied libprivacy_relay.so into lib/privacy_relay/native/
  # before `gem build`, the gem carries it (a gem for that platform); otherwise set PRIVACY_RELAY_LIB at run time.
  spec.files = Dir["lib/**/*.rb"] + Dir["lib/privacy_relay/native/*.{so,dylib,dll}"] + %w[README.md privacy_relay.gemspec]
  spec.files += Dir["examples/*.rb"]
end
