# frozen_string_literal: true

require_relative "test_helper"
require_relative "gateway"

# The Idempotency-Key and traceparent of a relay call against a real gateway and the fake provider: a call sent
# again with the same key (what a retry does) is answered from the gateway's record, not forwarded or debited
# twice; the caller's trace id reaches the provider.
class TestEndToEndIdempotency < Minitest::Test
  EMAIL = "jane.doe@example.com"
  TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

  def relay = TestGateway.shared

  def setup
    @api_key, = relay.funded_key
    relay.reset_provider
    @client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, retries: 0)
  end

  def test_a_call_sent_again_with_its_idempotency_key_is_answered_once_forwarded_once_debited_once
    key = "ruby-idem-#{Process.pid}-#{rand(1 << 30)}"
    messages = [{ role: "user", content: "Write to #{EMAIL}." }]
    first = @client.chat.completions.create(model: "local-chat", messages: messages, idempotency_key: key, traceparent: TRACEPARENT)
    after_first = @client.rest.self.balance["balance_usd"]
    again = @client.chat.completions.create(model: "local-chat", messages: messages, idempotency_key: key)
    assert_equal first.tokenised_request, again.tokenised_request, "the same key tokenises to the same bytes"
    assert_equal first["id"], again["id"]
    assert_equal first.receipt["jti"], again.receipt["jti"]
    assert_equal true, again.receipt_verified
    assert_includes again.dig("choices", 0, "message", "content"), EMAIL
    received = relay.received
    assert_equal 1, received.size, "forwarded once"
    refute_includes received[0]["body"], EMAIL
    assert_equal after_first, @client.rest.self.balance["balance_usd"], "debited once"
    other = @client.chat.completions.create(model: "local-chat", messages: messages)
    refute_equal first.receipt["jti"], other.receipt["jti"], "without the key: a new call"
    assert_equal 2, relay.received.size
  end

  def test_the_callers_trace_id_reaches_the_provider
    @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }], traceparent: TRACEPARENT)
    sent = relay.received[0]["headers"].transform_keys(&:downcase)["traceparent"]
    assert_match(/\A00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01\z/, sent)
  end
end
