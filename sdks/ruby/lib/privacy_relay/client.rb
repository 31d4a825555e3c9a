# frozen_string_literal: true

require "json"
require "securerandom"
require "base64"
require_relative "errors"
require_relative "native"
require_relative "device"
require_relative "engine"
require_relative "sse"
require_relative "transport"
require_relative "rest"

module PrivacyRelay
  IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks"
  ROUTE_PATHS = {
    "chat.completions" => "/api/v1/chat/completions", "messages" => "/api/v1/messages",
    "messages.count_tokens" => "/api/v1/messages/count_tokens", "embeddings" => "/api/v1/embeddings",
    "responses" => "/api/v1/responses"
  }.freeze
  # After a receipt names a kid the client's JWKS lacks (a key rotated in since), the JWKS is fetched again, at
  # most once in this many seconds (a forged kid cannot make every verification a request).
  JWKS_REFETCH_INTERVAL = 30.0

  # A provider-shaped answer (a Hash equal to the provider's JSON, originals restored) with the relay's metadata.
  class Response < Hash
    attr_accessor :request_id, :receipt, :receipt_verified, :receipt_verification, :countersignature, :tokenised_request, :passthrough,
                  :attestation # the X-Service-Attestation value sent (the v3 envelope the countersignature binds to)
  end

  # A streamed answer: Enumerable over the provider's chunks (chat) or events (messages, responses), originals restored as
  # they arrive. create(stream: true) sends the request and waits for the answer's headers, so an HTTP error
  # (401, 402, 429 after retries...) is raised by create; the body is read as you iterate. After the loop,
  # receipt, receipt_verified and receipt_verification describe the receipt-v2 trailer. Iterate once; close (or
  # a loop left early, then close) releases the connection. Without a block, each answers an Enumerator.
  class Stream
    include Enumerable
    attr_reader :request_id, :status, :receipt, :receipt_verified, :receipt_verification, :tokenised_request

    # @api private
    class Stop < StandardError; end

    def initialize(client, route, prepared, send)
      @client = client
      @route = route
      @prepared = prepared
      @tokenised_request = prepared.tokenised_body
      @used = false
      # The request runs in a fiber that pauses at the headers, then at each piece of the body.
      @fiber = Fiber.new do
        send.call do |status, headers, response|
          Fiber.yield [:headers, status, headers]
          response.read_body { |bytes| Fiber.yield [:bytes, bytes] }
        end
        [:done]
      rescue Stop
        [:done]
      end
      first = @fiber.resume
      _, @status, headers = first
      @request_id = headers && headers["x-request-id"]
    end

    def each(&block)
      return enum_for(:each) unless block
      raise StreamError.new("A stream can be iterated once.", code: "stream_error") if @used

      @used = true
      sse = SseDetokeniser.new(@route, @prepared.map)
      begin
        loop do
          kind, bytes = @fiber.resume
          break if kind == :done

          sse.push(bytes).each { |e| emit(e, block) }
        end
        sse.finish.each { |e| emit(e, block) }
      ensure
        sse.close
        close
      end
      unless sse.completed
        raise StreamError.new("The stream ended before its end marker (the upstream cut it); the answer is incomplete.",
                              status: @status, code: "stream_error", request_id: @request_id)
      end
      @receipt = sse.receipt.is_a?(Hash) ? sse.receipt : nil
      @receipt_verified, @receipt_verification = @client.send(:verify, @receipt)
      self
    end

    # Stops reading and releases the connection (safe to call twice, or after the end).
    def close
      @fiber.raise(Stop) if @fiber.alive?
      nil
    rescue FiberError
      nil
    end

    private

    def emit(event, block)
      return if event.event == "receipt-v2" || event.data == "[DONE]" || event.json.nil?

      block.call(event.json)
    end
  end

  # The client. Every relay call is tokenised and attested on this device by the shared engine, sent to the gateway
  # and answered with the originals restored here. Gateway-locked: https (or loopback http) only, and no key is
  # sent before the URL answered the gateway identity probe.
  class Client
    attr_reader :gateway_url, :chat, :messages, :embeddings, :responses, :models, :engine, :rest

    # gateway_url: https, or http to a loopback address. api_key or api_key_file (a 0600 file). names: "builtin"
    # (default) or "off". retries after the first attempt on 429, 5xx and network errors; timeout per attempt (s).
    # portal_token (spt_...) for the portal REST routes (keys, receipts list, webhooks, billing).
    # Every body is walked with the egress policy on this device before anything is sent (fail-closed): a field the
    # policy does not name is an InvalidRequestError (code unsupported_field, body["details"]["path"]), media an
    # UnsupportedContentError (415). Opt-ins, declared in the attestation's passthrough claim: media_policy "pass"
    # (media sent as it is) and passthrough_paths (JSON pointers, "*" for one segment, of fields sent untokenised).
    def initialize(gateway_url:, api_key: nil, api_key_file: nil, portal_token: nil, names: "builtin", retries: 2, timeout: 60.0,
                   device_key: nil, stable_embedding_aliases: true, media_policy: "refuse", passthrough_paths: [], transport: nil)
      @gateway_url = Device.parse_gateway_url(gateway_url)
      if api_key && api_key_file
        raise ConfigurationError.new("Give api_key or api_key_file, not both.", code: "configuration_error")
      end

      key = api_key_file ? Device.read_gateway_key_file(api_key_file) : api_key
      if key && !Device::GATEWAY_KEY.match?(key)
        raise ConfigurationError.new("api_key is not a gateway key (svc_...).", code: "configuration_error")
      end
      @api_key = key
      @portal_token = portal_token
      @engine = Engine.new(names: names, device_key: device_key, stable_embedding_aliases: stable_embedding_aliases,
                           media_policy: media_policy, passthrough_paths: passthrough_paths)
      @transport = transport || Transport.new(retries: retries, timeout: timeout)
      @lock = Mutex.new
      @jwks = nil
      @jwks_refetched_at = nil
      @chat = Chat.new(self)
      @messages = Messages.new(self)
      @responses = Responses.new(self)
      @embeddings = Embeddings.new(self)
      @models = Models.new(self)
      @rest = Rest.new(method(:rest_call), method(:verify_receipt))
    end

    # The gateway's receipt keys (JWKS), fetched by the identity probe.
    def jwks = ready

    # Offline verification of a receipt (v1, v2, failed, v3) against this gateway's keys; a kid this client has not
    # seen fetches the JWKS again first (a key rotated in since; at most once per JWKS_REFETCH_INTERVAL).
    def verify_receipt(receipt) = Native.verify_receipt(receipt, jwks_for(receipt))

    # @api private
    def relay(route, body, idempotency_key: nil, traceparent: nil, timeout: nil)
      prepared = @engine.prepare(route, body, idempotency_key)
      stream = !%w[embeddings messages.count_tokens].include?(route) && body["stream"] == true
      headers = base_headers(traceparent).merge(
        "content-type" => "application/json",
        "accept" => stream ? "text/event-stream" : "application/json",
        "idempotency-key" => idempotency_key || SecureRandom.uuid
      ).merge(prepared.headers)
      url = "#{@gateway_url}#{ROUTE_PATHS.fetch(route)}"
      ready
      if stream
        send = ->(&blk) { @transport.send_request("POST", url, headers: headers, body: prepared.body_text, timeout: timeout, &blk) }
        return Stream.new(self, route, prepared, send)
      end
      _, h, text = @transport.send_request("POST", url, headers: headers, body: prepared.body_text, timeout: timeout)
      answer = Response.new.merge!(JsonRestore.restore(JSON.parse(text), prepared.map))
      answer.request_id = h["x-request-id"]
      answer.receipt = decode_header(h["x-service-receipt-v2"])
      answer.receipt_verified, answer.receipt_verification = verify(answer.receipt)
      answer.countersignature = decode_header(h["x-service-receipt-v3"])
      answer.tokenised_request = prepared.tokenised_body
      answer.passthrough = prepared.passthrough
      answer.attestation = prepared.headers["x-service-attestation"]
      answer
    end

    # @api private
    def get_json(path, traceparent: nil, timeout: nil)
      ready
      _, _, text = @transport.send_request("GET", "#{@gateway_url}#{path}", headers: base_headers(traceparent), timeout: timeout)
      JSON.parse(text)
    end

    # @api private. auth: :key, :portal or :none. Writes get an Idempotency-Key (the same on every retry).
    def rest_call(method, path, auth, body = nil, idempotency_key: nil, traceparent: nil, timeout: nil)
      headers = { "accept" => "application/json", "traceparent" => traceparent || Transport.traceparent }
      case auth
      when :key then headers["authorization"] = "Bearer #{base_headers(nil)['authorization'].delete_prefix('Bearer ')}"
      when :portal
        raise ConfigurationError.new("This call needs a portal token: give portal_token (spt_...) to the client.", code: "configuration_error") if @portal_token.nil?

        headers["authorization"] = "Bearer #{@portal_token}"
      end
      headers["content-type"] = "application/json" unless body.nil?
      headers["idempotency-key"] = idempotency_key || SecureRandom.uuid if method != "GET"
      ready if auth != :none # a key or token goes only to a URL that answered the identity probe
      _, _, text = @transport.send_request(method, "#{@gateway_url}#{path}", headers: headers,
                                                   body: body.nil? ? nil : JSON.generate(body), timeout: timeout)
      text.to_s.empty? ? nil : JSON.parse(text)
    end

    private

    def base_headers(traceparent)
      raise ConfigurationError.new("This call needs a gateway key: give api_key or api_key_file.", code: "configuration_error") if @api_key.nil?

      { "authorization" => "Bearer #{@api_key}", "accept" => "application/json", "traceparent" => traceparent || Transport.traceparent }
    end

    # The identity probe, once per client (again after a failure): nothing is sent before it passed.
    def ready
      @lock.synchronize do
        return @jwks if @jwks

        @jwks = fetch_jwks
      end
    end

    # The JWKS to verify this receipt with: the one held, or a fresh one when it lacks the receipt's kid and no
    # such refetch happened in the last JWKS_REFETCH_INTERVAL. Rotated-out keys stay published, so a kid the gateway does not
    # publish stays unknown and the verdict says so.
    def jwks_for(receipt)
      held = ready
      kid = Client.kid_of(receipt)
      return held if kid.nil? || held["keys"].any? { |k| k["kid"] == kid }

      @lock.synchronize do
        now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        if @jwks["keys"].none? { |k| k["kid"] == kid } && (@jwks_refetched_at.nil? || now - @jwks_refetched_at >= JWKS_REFETCH_INTERVAL)
          @jwks_refetched_at = now
          begin
            @jwks = fetch_jwks
          rescue GatewayIdentityError
            nil # keep the keys held; the verdict names the unknown kid
          end
        end
        @jwks
      end
    end

    # @api private. The kid a receipt (a Hash, or a header value: base64url JSON) names, or nil.
    def self.kid_of(receipt)
      value = receipt
      if receipt.is_a?(String)
        value = begin
          JSON.parse(Base64.urlsafe_decode64(receipt.strip + ("=" * ((4 - (receipt.strip.length % 4)) % 4))))
        rescue ArgumentError, JSON::ParserError
          begin
            JSON.parse(receipt)
          rescue JSON::ParserError
            nil
          end
        end
      end
      kid = value.is_a?(Hash) ? value["kid"] : nil
      kid.is_a?(String) ? kid : nil
    end

    # GET the JWKS (the identity probe): a JWKS of P-256 public keys, else GatewayIdentityError. Holds @lock.
    def fetch_jwks
      status, body = begin
        s, _, text = @transport.send_request("GET", "#{@gateway_url}#{IDENTITY_PROBE_PATH}", headers: { "accept" => "application/json" })
        [s, JSON.parse(text)]
      rescue Error => e
        raise GatewayIdentityError.new("gateway_url #{@gateway_url} is not a Privacy Relay gateway or cannot be reached: #{e.message}",
                                       code: "gateway_identity_failed")
      rescue JSON::ParserError
        [200, nil]
      end
      keys = body.is_a?(Hash) ? body["keys"] : nil
      unless status == 200 && keys.is_a?(Array) && !keys.empty? && keys.all? { |k| k.is_a?(Hash) && k["kty"] == "EC" && k["crv"] == "P-256" && !k.key?("d") }
        raise GatewayIdentityError.new("gateway_url #{@gateway_url} is not a Privacy Relay gateway: the answer at GET #{IDENTITY_PROBE_PATH} " \
                                       "is not a JWKS of P-256 receipt keys. Client components only talk to a gateway, never to a provider.",
                                       code: "gateway_identity_failed")
      end
      body
    end

    def verify(receipt)
      return [nil, nil] if receipt.nil?

      result = Native.verify_receipt(receipt, jwks_for(receipt))
      [result["valid"] == true, result]
    end

    def decode_header(value)
      return nil if value.nil?

      decoded = JSON.parse(Base64.decode64(value.tr("-_", "+/")))
      decoded.is_a?(Hash) ? decoded : nil
    rescue JSON::ParserError
      nil
    end

    # client.chat.completions.create(model:, messages:, stream: false, **extra)
    class Resource
      def initialize(client, route)
        @client = client
        @route = route
      end

      def create(model: nil, messages: nil, stream: false, idempotency_key: nil, traceparent: nil, timeout: nil, **extra)
        body = {}
        body["model"] = model unless model.nil?
        body["messages"] = messages unless messages.nil?
        body["stream"] = true if stream
        body.merge!(extra.transform_keys(&:to_s))
        @client.relay(@route, deep_stringify(body), idempotency_key: idempotency_key, traceparent: traceparent, timeout: timeout)
      end

      private

      def deep_stringify(value)
        case value
        when Hash then value.to_h { |k, v| [k.to_s, deep_stringify(v)] }
        when Array then value.map { |v| deep_stringify(v) }
        else value
        end
      end
    end

    # client.messages.create(...) and client.messages.count_tokens(model:, messages:, ...) (Anthropic's
    # POST /v1/messages/count_tokens: {"input_tokens"} of the tokenised request, as the provider counts it).
    class Messages < Resource
      def initialize(client) = super(client, "messages")

      def count_tokens(model: nil, messages: nil, idempotency_key: nil, traceparent: nil, timeout: nil, **extra)
        Resource.new(@client, "messages.count_tokens")
                .create(model: model, messages: messages, idempotency_key: idempotency_key, traceparent: traceparent, timeout: timeout, **extra)
      end
    end

    # client.responses.create(model:, input:, instructions: nil, stream: false, **extra): OpenAI's Responses API.
    # Streamed: Responses events (response.output_text.delta, ..., response.completed) with the originals restored.
    class Responses < Resource
      def initialize(client) = super(client, "responses")

      def create(model: nil, input: nil, stream: false, idempotency_key: nil, traceparent: nil, timeout: nil, **extra)
        extra = { input: input }.merge(extra) unless input.nil?
        super(model: model, stream: stream, idempotency_key: idempotency_key, traceparent: traceparent, timeout: timeout, **extra)
      end
    end

    class Chat
      attr_reader :completions

      def initialize(client)
        @completions = Resource.new(client, "chat.completions")
      end
    end

    # client.embeddings.create(model:, input:); stable (keyed) aliases by default so equal inputs embed equally.
    class Embeddings < Resource
      def initialize(client) = super(client, "embeddings")

      def create(model: nil, input: nil, idempotency_key: nil, traceparent: nil, timeout: nil, **extra)
        super(model: model, idempotency_key: idempotency_key, traceparent: traceparent, timeout: timeout, input: input, **extra)
      end
    end

    class Models
      def initialize(client)
        @client = client
      end

      def list(traceparent: nil, timeout: nil) = @client.get_json("/api/v1/models", traceparent: traceparent, timeout: timeout)
    end
  end
end
