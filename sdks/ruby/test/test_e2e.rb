# frozen_string_literal: true

require_relative "test_helper"
require_relative "gateway"
require "timeout"
require "open3"
require "rbconfig"

# Against a real gateway process and the fake provider: what the provider saw holds no original value.
class TestEndToEnd < Minitest::Test
  EMAIL = "jane.doe@example.com"
  PHONE = "+44 20 7946 0958"

  def relay = TestGateway.shared

  def setup
    key, = relay.funded_key
    @key_file = File.join(Dir.mktmpdir("pr-ruby-key-"), "gateway-key")
    File.write(@key_file, "#{key}\n")
    File.chmod(0o600, @key_file)
    relay.reset_provider
    @client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key_file: @key_file, retries: 0)
  end

  def sent_text = relay.received.map { |r| r["body"].to_s }.join("\n")

  def assert_no_original
    text = sent_text
    refute_empty text
    refute_includes text, EMAIL
    refute_includes text, PHONE
  end

  def test_chat_completion
    answer = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "Write to #{EMAIL} or call #{PHONE}, please." }])
    assert_kind_of Hash, answer
    content = answer.dig("choices", 0, "message", "content")
    assert_kind_of String, content
    refute_nil answer.request_id
    refute_nil answer.receipt, "X-Service-Receipt-V2 present"
    assert_equal true, answer.receipt_verified, answer.receipt_verification.inspect
    refute_includes JSON.generate(answer.tokenised_request), EMAIL
    assert_no_original
    # the fake provider echoes the (tokenised) prompt; the client restored the originals here
    assert_includes content, EMAIL
    assert_includes content, PHONE
    headers = relay.received.last["headers"].transform_keys(&:downcase)
    refute headers.key?("x-service-attestation"), "the attestation stays at the gateway"
  end

  def test_chat_stream
    stream = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "Mail #{EMAIL} today." }], stream: true)
    assert_kind_of Enumerable, stream
    chunks = stream.each.to_a
    refute_empty chunks
    text = chunks.map { |c| c.dig("choices", 0, "delta", "content").to_s }.join
    refute_match(/<EMAIL_/, text, "aliases restored across chunk boundaries")
    assert_includes text, EMAIL
    refute_nil stream.receipt, "receipt-v2 trailer"
    assert_equal true, stream.receipt_verified, stream.receipt_verification.inspect
    assert_no_original
    assert_raises(PrivacyRelay::StreamError) { stream.each { nil } }
  end

  def test_messages_stream_and_json
    answer = @client.messages.create(model: "local-chat", max_tokens: 64, messages: [{ role: "user", content: "Call #{PHONE}." }])
    assert_equal true, answer.receipt_verified
    events = @client.messages.create(model: "local-chat", max_tokens: 64, stream: true,
                                     messages: [{ role: "user", content: "Call #{PHONE}." }]).to_a
    assert(events.any? { |e| e["type"] == "message_stop" })
    text = events.filter_map { |e| e.dig("delta", "text") if e["type"] == "content_block_delta" }.join
    assert_includes text, PHONE
    assert_no_original
  end

  def test_embeddings
    answer = @client.embeddings.create(model: "local-embed", input: "Contact #{EMAIL}")
    assert_kind_of Array, answer["data"]
    assert_equal true, answer.receipt_verified
    assert_no_original
  end

  def test_models
    models = @client.models.list
    assert_kind_of Array, models["data"]
  end

  def test_errors_carry_status_code_request_id
    client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: "svc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", retries: 0)
    e = assert_raises(PrivacyRelay::AuthenticationError) { client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }]) }
    assert_equal 401, e.status
    refute_nil e.code
    refute_nil e.request_id
  end

  def test_not_a_gateway_gets_nothing
    client = PrivacyRelay::Client.new(gateway_url: relay.provider_url, api_key_file: @key_file, retries: 0)
    assert_raises(PrivacyRelay::GatewayIdentityError) { client.chat.completions.create(model: "m", messages: [{ role: "user", content: EMAIL }]) }
    assert_empty relay.received.select { |r| r["body"].to_s.include?(EMAIL) }
  end
end

class TestExamples < Minitest::Test
  def test_quickstart_runs_as_written
    relay = TestGateway.shared
    key, = relay.funded_key
    dir = Dir.mktmpdir("pr-ruby-example-")
    File.write(File.join(dir, "gateway-key"), "#{key}\n")
    File.chmod(0o600, File.join(dir, "gateway-key"))
    env = { "GATEWAY_URL" => relay.url, "PRIVACY_RELAY_KEY_FILE" => File.join(dir, "gateway-key") }
    out, err, status = Open3.capture3(env, RbConfig.ruby, "-I#{File.expand_path('../lib', __dir__)}", File.expand_path("../examples/quickstart.rb", __dir__))
    assert status.success?, err
    assert_includes out, "jane.doe@example.com"
    assert_includes out, "receipt verified: true"
    assert_includes out, "+44 20 7946 0958"
  end
end

class TestResponsesExample < Minitest::Test
  def test_responses_example_runs_as_written
    relay = TestGateway.shared
    key, = relay.funded_key
    dir = Dir.mktmpdir("pr-ruby-example-")
    File.write(File.join(dir, "gateway-key"), "#{key}\n")
    File.chmod(0o600, File.join(dir, "gateway-key"))
    env = { "GATEWAY_URL" => relay.url, "PRIVACY_RELAY_KEY_FILE" => File.join(dir, "gateway-key") }
    out, err, status = Open3.capture3(env, RbConfig.ruby, "-I#{File.expand_path('../lib', __dir__)}", File.expand_path("../examples/responses.rb", __dir__))
    assert status.success?, err
    assert_includes out, "Draft a reply to jane.doe@example.com."
    assert_includes out, "receipt verified: true"
    assert_match(/input tokens: [1-9]\d*/, out)
  end
end

class TestStreamLifecycle < Minitest::Test
  def relay = TestGateway.shared

  def test_a_stream_error_is_raised_by_create_and_an_early_exit_releases_the_connection
    client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: "svc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", retries: 0)
    e = assert_raises(PrivacyRelay::AuthenticationError) do
      client.chat.completions.create(model: "local-chat", stream: true, messages: [{ role: "user", content: "hi" }])
    end
    assert_equal 401, e.status
    key, = relay.funded_key
    client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: key, retries: 0, names: "off")
    stream = client.chat.completions.create(model: "local-chat", stream: true, messages: [{ role: "user", content: "a long enough prompt " * 5 }])
    assert_equal 200, stream.status
    first = stream.first
    refute_nil first
    stream.close
    stream.close
    # the next call still works (nothing left half-read)
    assert_equal true, client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }]).receipt_verified
  end
end
