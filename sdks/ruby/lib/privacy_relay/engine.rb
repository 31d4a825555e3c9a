# frozen_string_literal: true

require "base64"
require "json"
require_relative "native"
require_relative "device"

module PrivacyRelay
  # What leaves the device for one call (body_text, headers) and what stays (map: alias -> original).
  Prepared = Struct.new(:body_text, :headers, :map, :tokenised_body, :detectors_fired, keyword_init: true)

  # The on-device half of a relay call, all in the shared engine (C ABI): tokenise the body, sign the v3
  # attestation of the exact bytes sent, naming engine relay-rb with the core build's sha256.
  class Engine
    ROUTES = %w[chat.completions messages embeddings].freeze

    attr_reader :identity

    def initialize(names: "builtin", device_key: nil, stable_embedding_aliases: true)
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

      options = { "names" => @names }
      options["stable_alias_secret_hex"] = alias_secret.unpack1("H*") if route == "embeddings" && @stable
      if idempotency_key && @stable
        options["device_alias_secret_hex"] = alias_secret.unpack1("H*")
        options["idempotency_key"] = idempotency_key
      end
      t = Native.tokenise_request(route, body, options)
      attestation = Native.build_attestation(
        { "route" => route, "body" => t["body_text"], "body_is_canonical" => true,
          "detectors_fired" => t["detectors_fired"], "engine" => @identity }, device_key
      )
      Prepared.new(
        body_text: t["body_text"],
        headers: { "x-service-engine" => attestation["engine_header"], "x-service-attestation" => attestation["header"] },
        map: t["map"].to_h, tokenised_body: t["body"], detectors_fired: t["detectors_fired"]
      )
    end
  end
end
