# frozen_string_literal: true

ENV["RUST_BACKTRACE"] = "0" # pr_debug_panic's test: no backtrace noise
require "minitest/autorun"
require "json"
require "tmpdir"
require "privacy_relay"

# Device files (attester key, alias secret) in a temp dir, never the user's ~/.config.
ENV["PRIVACY_RELAY_CONFIG_DIR"] ||= Dir.mktmpdir("pr-ruby-config-")

VECTORS = File.expand_path("../../vectors", __dir__)
def vectors(name) = JSON.parse(File.read(File.join(VECTORS, "#{name}.json")))
