# frozen_string_literal: true

require_relative "test_helper"
require_relative "gateway"

# The egress policy on the device (the shared engine walks every body before anything is sent) and its two
# opt-ins, media_policy and passthrough_paths, against a real gateway and the fake provider: refusals send nothing;
# an opt-in sends exactly what it names, declared in the attestation's passthrough claim, which the gateway accepts.
class TestEndToEndEgress < Minitest::Test
  EMAIL = "jane.doe@example.com"
  PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

  def relay = TestGateway.shared

  def setup
    @api_key, = relay.funded_key
    relay.reset_provider
  end

  def client(**opts) = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, names: "off", retries: 0, **opts)

  def image_message(url) = [{ role: "user", content: [{ type: "text", text: "what is this, #{EMAIL}?" }, { type: "image_url", image_url: { url: url } }] }]

  def test_an_image_is_refused_415_naming_the_part_and_nothing_is_sent
    e = assert_raises(PrivacyRelay::UnsupportedContentError) { client.chat.completions.create(model: "local-chat", messages: image_message(PNG_DATA_URL)) }
    assert_equal [415, "unsupported_content", "/messages/0/content/1"], [e.status, e.code, e.body.dig("details", "path")]
    refute_includes e.message, "iVBOR"
    anthropic = [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_DATA_URL.split(",")[1] } }] }]
    e = assert_raises(PrivacyRelay::UnsupportedContentError) { client.messages.create(model: "local-chat", max_tokens: 8, messages: anthropic) }
    assert_equal "/messages/0/content/0/source", e.body.dig("details", "path")
    assert_empty relay.received
  end

  def test_an_invented_field_an_invented_part_and_deep_nesting_are_refused_on_the_device
    c = client
    e = assert_raises(PrivacyRelay::InvalidRequestError) { c.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }], x_trace_note: EMAIL) }
    assert_equal [400, "unsupported_field", "/x_trace_note"], [e.status, e.code, e.body.dig("details", "path")]
    refute_includes e.message, EMAIL
    e = assert_raises(PrivacyRelay::InvalidRequestError) { c.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: [{ type: "hologram", data: EMAIL }] }]) }
    assert_equal "/messages/0/content/0", e.body.dig("details", "path")
    deep = EMAIL
    80.times { deep = { "d" => deep } }
    e = assert_raises(PrivacyRelay::InvalidRequestError) { c.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }], metadata: { "k" => deep }) }
    assert_equal "nesting_too_deep", e.code
    assert_empty relay.received
  end

  def test_opt_ins_send_what_they_name_declared_and_the_gateway_accepts_the_claim
    c = client(media_policy: "pass", passthrough_paths: ["/x_trace_note"])
    answer = c.chat.completions.create(model: "local-chat", x_trace_note: "ticket 42", messages: image_message(PNG_DATA_URL))
    assert_equal true, answer.receipt_verified, answer.receipt_verification.inspect
    assert_equal [{ "path" => "/messages/0/content/1", "kind" => "image" }, { "path" => "/x_trace_note", "kind" => "field" }], answer.passthrough
    header = c.engine.prepare("chat.completions", { "model" => "m", "x_trace_note" => "t", "messages" => [] }).headers["x-service-attestation"]
    claim = JSON.parse(Base64.urlsafe_decode64(header)).dig("claims", "v3-attestation")
    assert_equal [{ "path" => "/x_trace_note", "kind" => "field" }], claim["passthrough"]
    plain = client.engine.prepare("chat.completions", { "model" => "m", "messages" => [] }).headers["x-service-attestation"]
    refute JSON.parse(Base64.urlsafe_decode64(plain)).dig("claims", "v3-attestation").key?("passthrough")
    # a remote URL naming somebody is refused even under "pass"
    assert_raises(PrivacyRelay::UnsupportedContentError) do
      c.chat.completions.create(model: "local-chat", messages: image_message("https://cdn.example.com/#{EMAIL}.png"))
    end
    received = relay.received
    assert_equal 1, received.size
    sent = JSON.parse(received[0]["body"])
    refute_includes received[0]["body"], EMAIL
    assert_equal "ticket 42", sent["x_trace_note"]
    assert_equal PNG_DATA_URL, sent.dig("messages", 0, "content", 1, "image_url", "url")
  end

  def test_settings_are_checked_at_construction
    [{ media_policy: "maybe" }, { media_policy: "redact" }, { passthrough_paths: "/x_note" }, { passthrough_paths: ["x_note"] }, { passthrough_paths: [3] }].each do |opts|
      e = assert_raises(PrivacyRelay::ConfigurationError, opts.inspect) { client(**opts) }
      assert_equal "configuration_error", e.code
    end
  end
end
