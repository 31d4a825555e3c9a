# frozen_string_literal: true

require "erb"
require "uri"

module PrivacyRelay
  # The gateway's REST capability set beside the relay (client.rest): keys, receipts, transparency, webhooks,
  # billing, the key's own organisation (self) and self-service/demo keys. Portal routes take the client's
  # portal_token; the others the gateway key, or nothing. Writes carry an Idempotency-Key (generated when none
  # is given, the same on every retry); every method takes idempotency_key:, traceparent:, timeout:.
  class Rest
    # @api private
    module Path
      module_function

      def q(value) = ERB::Util.url_encode(value.to_s)

      def query(params)
        items = (params || {}).reject { |_, v| v.nil? }.to_h { |k, v| [k.to_s.delete_suffix("_"), v.to_s] }
        items.empty? ? "" : "?#{URI.encode_www_form(items)}"
      end
    end

    class Section
      include Path

      def initialize(call)
        @call = call
      end
    end

    class Keys < Section
      def create(name: nil, permissions: nil, models: nil, rotation_days: nil, org_id: nil, **o)
        body = { "name" => name, "permissions" => permissions, "models" => models, "rotation_days" => rotation_days, "org_id" => org_id }.compact
        @call.call("POST", "/api/keys", :portal, body, **o)
      end

      def list(org_id: nil, **o) = @call.call("GET", "/api/v1/keys#{query(org_id: org_id)}", :portal, nil, **o)
      def update(key_id, changes, **o) = @call.call("PATCH", "/api/keys/#{q(key_id)}", :portal, changes, **o)
      def rotate(key_id, **o) = @call.call("POST", "/api/keys/#{q(key_id)}/rotate", :portal, {}, **o)
      def revoke(key_id, **o) = @call.call("POST", "/api/keys/#{q(key_id)}/revoke", :portal, {}, **o)

      # The permissions and model allowlist of a key as the portal lists it (nil for an unknown id).
      def scopes(key_id, **o)
        key = list(**o).fetch("keys", []).find { |k| k["id"] == key_id }
        key && { "permissions" => key["permissions"], "models" => key["models"] }
      end
    end

    class Receipts < Section
      def initialize(call, verify)
        super(call)
        @verify = verify
      end

      # Offline, against the gateway's JWKS.
      def verify(header_value_or_envelope) = @verify.call(header_value_or_envelope)

      # The gateway's own verify route: {"valid", "reason", "checks"}. The gateway answers an invalid receipt with
      # 422 and the verdict: that is a verdict here too, not an error (400 invalid_payload still raises).
      def verify_online(value, **o)
        body = value.is_a?(String) ? { "receipt" => value } : value
        @call.call("POST", "/api/v1/receipts/verify", :none, body, **o)
      rescue Error => e
        raise unless e.status == 422 && e.body.is_a?(Hash) && e.body["valid"] == false

        e.body
      end

      def list(limit: nil, cursor: nil, from: nil, to: nil, model: nil, **o)
        @call.call("GET", "/api/v1/receipts#{query(limit: limit, cursor: cursor, from: from, to: to, model: model)}", :portal, nil, **o)
      end

      def get(jti, **o) = @call.call("GET", "/api/v1/receipts/#{q(jti)}", :portal, nil, **o)
      def countersign(body, **o) = @call.call("POST", "/api/v1/receipts/countersign", :key, body, **o)
      def signed_tree_head(**o) = @call.call("GET", "/api/v1/transparency/sth", :none, nil, **o)
      def inclusion_proof(jti, **o) = @call.call("GET", "/api/v1/transparency/proof/#{q(jti)}", :none, nil, **o)

      def consistency_proof(first, second = nil, **o)
        @call.call("GET", "/api/v1/transparency/consistency#{query(first: first, second: second)}", :none, nil, **o)
      end
    end

    class WebhookEndpoints < Section
      def create(url:, events: nil, **o)
        @call.call("POST", "/api/v1/webhooks/endpoints", :portal, { "url" => url, "events" => events }.compact, **o)
      end

      def list(**o) = @call.call("GET", "/api/v1/webhooks/endpoints", :portal, nil, **o)
      def get(id, **o) = @call.call("GET", "/api/v1/webhooks/endpoints/#{q(id)}", :portal, nil, **o)
      def update(id, changes, **o) = @call.call("PATCH", "/api/v1/webhooks/endpoints/#{q(id)}", :portal, changes, **o)
      def delete(id, **o) = @call.call("DELETE", "/api/v1/webhooks/endpoints/#{q(id)}", :portal, nil, **o)
      def rotate_secret(id, **o) = @call.call("POST", "/api/v1/webhooks/endpoints/#{q(id)}/rotate", :portal, {}, **o)
      def test(id, **o) = @call.call("POST", "/api/v1/webhooks/endpoints/#{q(id)}/test", :portal, {}, **o)
      def resume(id, **o) = @call.call("POST", "/api/v1/webhooks/endpoints/#{q(id)}/resume", :portal, {}, **o)
    end

    class WebhookDeliveries < Section
      def list(query_params = nil, **o) = @call.call("GET", "/api/v1/webhooks/deliveries#{query(query_params)}", :portal, nil, **o)
      def get(id, **o) = @call.call("GET", "/api/v1/webhooks/deliveries/#{q(id)}", :portal, nil, **o)
      def replay(id, **o) = @call.call("POST", "/api/v1/webhooks/deliveries/#{q(id)}/replay", :portal, {}, **o)
    end

    class Webhooks
      attr_reader :endpoints, :deliveries

      def initialize(call)
        @endpoints = WebhookEndpoints.new(call)
        @deliveries = WebhookDeliveries.new(call)
      end
    end

    class Billing < Section
      def balance(**o) = @call.call("GET", "/api/v1/billing/balance", :portal, nil, **o)
      # Starts a top-up checkout; answers its checkout_url.
      def top_up(amount_usd:, **o) = @call.call("POST", "/api/v1/billing/topup", :portal, { "amount_usd" => amount_usd }, **o)
      # Development payments only: completes a checkout as if it had been paid.
      def complete_dev_checkout(id, **o) = @call.call("POST", "/api/v1/billing/dev/checkouts/#{q(id)}/complete", :portal, {}, **o)
      def redeem_licence(code:, **o) = @call.call("POST", "/api/v1/billing/redeem-license", :portal, { "code" => code }, **o)
      def ledger(query_params = nil, **o) = @call.call("GET", "/api/v1/billing/ledger#{query(query_params)}", :portal, nil, **o)
      def usage(query_params = nil, **o) = @call.call("GET", "/api/v1/billing/usage#{query(query_params)}", :portal, nil, **o)
    end

    # The gateway key's own organisation, read-only, with the gateway key alone.
    class Own < Section
      def balance(**o) = @call.call("GET", "/api/v1/self/balance", :key, nil, **o)
      def usage(from: nil, to: nil, **o) = @call.call("GET", "/api/v1/self/usage#{query(from: from, to: to)}", :key, nil, **o)
      def key(**o) = @call.call("GET", "/api/v1/self/key", :key, nil, **o)
    end

    attr_reader :keys, :receipts, :webhooks, :billing

    def initialize(call, verify)
      @call = call
      @keys = Keys.new(call)
      @receipts = Receipts.new(call, verify)
      @webhooks = Webhooks.new(call)
      @billing = Billing.new(call)
      @own = Own.new(call)
    end

    # client.rest.self.balance / usage / key (`self` is Ruby's keyword, so it is defined as a method).
    define_method(:self) { @own }

    # A free-tier key (shown once). No auth.
    def self_service_key(email: nil, name: nil, **o)
      @call.call("POST", "/api/v1/self-service/key", :none, { "email" => email, "name" => name }.compact, **o)
    end

    # An anonymous demo key: relay only (shown once). No auth.
    def demo_key(**o) = @call.call("POST", "/api/v1/demo/key", :none, {}, **o)
  end

  # Remembers webhook event ids for ttl_seconds: seen(id) is false the first time, true for a redelivery.
  class WebhookDeduper
    def initialize(ttl_seconds: 24 * 3600, now: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
      @ttl = ttl_seconds
      @now = now
      @seen = {}
      @lock = Mutex.new
    end

    def seen(event_id)
      @lock.synchronize do
        t = @now.call
        @seen.delete_if { |_, at| t - at > @ttl }
        return true if @seen.key?(event_id)

        @seen[event_id] = t
        false
      end
    end

    def size = @lock.synchronize { @seen.size }

    # The event id of a delivery: X-Service-Webhook-Event-Id, else the body's event_id.
    def self.event_id_of(body, headers)
      h = headers.to_h { |k, v| [k.to_s.downcase, v] }
      return h["x-service-webhook-event-id"] if h["x-service-webhook-event-id"].to_s != ""

      parsed = JSON.parse(body.to_s)
      parsed.is_a?(Hash) && parsed["event_id"].is_a?(String) ? parsed["event_id"] : nil
    rescue JSON::ParserError
      nil
    end
  end
end
