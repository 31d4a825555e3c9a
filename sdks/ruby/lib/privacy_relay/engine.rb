# frozen_string_literal: true

require "base64"
require "json"
require_relative "native"
require_relative "device"

module PrivacyRelay
  # What leaves the device for one call (body_text, headers) and what stays (map: alias -> original).
  # passthrough: what media_policy / passthrough_paths let through untokenised ([{path, kind}]), as attested.
  Prepared = Struct.new(:body_text, :headers, :map, :tokenised_body, :detectors_fired, :passthrough, keyword_init: true)

  # The on-device half of a relay call, all in the shared engine (C ABI): tokenise the body, sign the v3
  # attestation of the exact bytes sent, naming engine relay-rb with the core build's sha256.
  class Engine
    ROUTES = %w[chat.completions messages messages.count_tokens embeddings responses].freeze
    MEDIA_POLICIES = %w[refuse pass].freeze

    attr_reader :identity

    # media_policy: "refuse" (default: an image, audio or file part is refused on the device, 415) or "pass" (sent
    # as it is; a remote URL naming somebody is still refused). passthrough_paths: JSON pointers ("*" for one
    # segment) of fields the policy does not name, sent untokenised. Both are declared in the attestation.
    def initialize(names: "builtin", device_key: nil, stable_embedding_aliases: true, media_policy: "refuse", passthrough_paths: [])
      @media_policy = Engine.check_media_policy(media_policy)
      @passthrough_paths = Engine.check_passthrough_paths(passthrough_paths)
      info = Native.engine_info # loads the library: EngineUnavailableError here, at construction
      @identity = { "id" => ENGINE_ID, "version" => VERSION, "sha256" => info.fetch("sha256") }
      @names = names
      @device_key = device_key
      @stable = stable_embedding_aliases
      @lock = Mutex.new
    end

    def device_key = @lock.synchronize { @device_key ||= Device.load_or_create_device_key }
    def alias_secret = @lock.synchronize { @alias_secret ||= Device.load_or_create_alias_secret }

    def prepare(route, body, idempotency_key = nil)
      raise ArgumentError, "route must be one of #{ROUTES.join(', ')}" unless ROUTES.include?(route)

      options = { "names" => @names, "media_policy" => @media_policy, "passthrough_paths" => @passthrough_paths }
      options["stable_alias_secret_hex"] = alias_secret.unpack1("H*") if route == "embeddings" && @stable
      if idempotency_key && @stable
        options["device_alias_secret_hex"] = alias_secret.unpack1("H*")
        options["idempotency_key"] = idempotency_key
      end
      t = Native.tokenise_request(route, body, options)
      attestation = Native.build_attestation(
        { "route" => route, "body" => t["body_text"], "body_is_canonical" => true,
          "detectors_fired" => t["detectors_fired"], "engine" => @identity, "passthrough" => t["passthrough"] }, device_key
      )
      Prepared.new(
        body_text: t["body_text"],
        headers: { "x-service-engine" => attestation["engine_header"], "x-service-attestation" => attestation["header"] },
        map: t["map"].to_h, tokenised_body: t["body"], detectors_fired: t["detectors_fired"], passthrough: t["passthrough"]
      )
    end

    # "redact" needs an image redactor, which this SDK does not ship (the engine would refuse every image anyway).
    def self.check_media_policy(value)
      return value if MEDIA_POLICIES.include?(value)

      raise ConfigurationError.new("media_policy must be \"refuse\" (default) or \"pass\", not #{value.inspect} " \
                                   "(\"redact\" needs an image redactor, which the Ruby SDK does not have).", code: "configuration_error")
    end

    def self.check_passthrough_paths(value)
      unless value.is_a?(Array) && value.all? { |p| p.is_a?(String) }
        raise ConfigurationError.new('passthrough_paths must be an Array of JSON pointers such as "/metadata_note" or "/messages/*/x_tag".',
                                     code: "configuration_error")
      end
      bad = value.find { |p| !p.start_with?("/") }
      raise ConfigurationError.new("passthrough_paths: #{bad.inspect} is not a JSON pointer (it starts with /, e.g. \"/x_trace_note\").", code: "configuration_error") if bad

      value.dup.freeze
    end
  end
end
