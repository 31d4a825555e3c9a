# frozen_string_literal: true

require_relative "test_helper"
require "open3"
require "socket"
require "rbconfig"

# Bad input, each a typed error with nothing sent; SSE detokenisation; retries honouring Retry-After.
class TestClient < Minitest::Test
  LIB = File.expand_path("../lib", __dir__)

  def key_file(mode)
    path = File.join(Dir.mktmpdir("pr-ruby-key-"), "gateway-key")
    File.write(path, "svc_abcdefgh\n")
    File.chmod(mode, path)
    path
  end

  def test_gateway_url_must_be_https_or_loopback
    ["http://gateway.example.com", "ftp://127.0.0.1", "", "https://u:p@gw.example.com", "https://gw.example.com/?q=1"].each do |url|
      e = assert_raises(PrivacyRelay::ConfigurationError, url) { PrivacyRelay::Client.new(gateway_url: url, api_key: "svc_abc") }
      assert_equal "configuration_error", e.code
    end
    assert_equal "http://127.0.0.1:8080", PrivacyRelay::Client.new(gateway_url: "http://127.0.0.1:8080/", api_key: "svc_abc").gateway_url
    assert_equal "https://gw.example.com/relay", PrivacyRelay::Client.new(gateway_url: "https://gw.example.com/relay/", api_key: "svc_abc").gateway_url
  end

  def test_key_file_readable_by_others_is_refused
    e = assert_raises(PrivacyRelay::ConfigurationError) { PrivacyRelay::Client.new(gateway_url: "https://gw.example.com", api_key_file: key_file(0o644)) }
    assert_match(/chmod 600/, e.message)
    refute_match(/svc_abcdefgh/, e.message)
    PrivacyRelay::Client.new(gateway_url: "https://gw.example.com", api_key_file: key_file(0o600))
  end

  def test_key_that_is_not_a_gateway_key
    assert_raises(PrivacyRelay::ConfigurationError) { PrivacyRelay::Client.new(gateway_url: "https://gw.example.com", api_key: "sk-openai") }
  end

  def run_ruby(env, code)
    Open3.capture3(env, RbConfig.ruby, "-I#{LIB}", "-e", code)
  end

  def test_library_missing_is_a_clear_error_at_construction
    code = 'require "privacy_relay"; begin; PrivacyRelay::Client.new(gateway_url: "https://gw.example.com", api_key: "svc_abc"); ' \
           'rescue PrivacyRelay::EngineUnavailableError => e; puts e.code; puts e.message; exit 3; end'
    out, _, status = run_ruby({ "PRIVACY_RELAY_LIB" => "/nonexistent/libprivacy_relay.so" }, code)
    assert_equal 3, status.exitstatus, out
    assert_match(/engine_unavailable/, out)
    assert_match(%r{PRIVACY_RELAY_LIB=/nonexistent}, out)
    # a file that is not a shared library
    out, _, status = run_ruby({ "PRIVACY_RELAY_LIB" => __FILE__ }, code)
    assert_equal 3, status.exitstatus, out
    assert_match(/cannot be loaded/, out)
  end

  def test_library_of_another_abi_version_is_refused
    code = 'require "privacy_relay"; PrivacyRelay::Native.send(:remove_const, :ABI_VERSION); PrivacyRelay::Native.const_set(:ABI_VERSION, 99); ' \
           'begin; PrivacyRelay::Native.engine_info; rescue PrivacyRelay::EngineUnavailableError => e; puts e.message; exit 3; end'
    out, err, status = run_ruby({}, code)
    assert_equal 3, status.exitstatus, out + err
    assert_match(/ABI version 1; this SDK .* needs 99/, out)
  end

  # --- SSE ---------------------------------------------------------------------------------------------------------

  MAP = { "<EMAIL_1_ynha>" => "jane.doe@example.com" }.freeze

  def chat_frame(content, finish = nil)
    "data: #{JSON.generate({ 'id' => 'c1', 'choices' => [{ 'index' => 0, 'delta' => { 'content' => content }, 'finish_reason' => finish }] })}\n\n"
  end

  def test_sse_restores_an_alias_cut_across_frames_and_bytes
    sse = PrivacyRelay::SseDetokeniser.new("chat.completions", MAP)
    wire = chat_frame("Mail <EMA") + chat_frame("IL_1_ynha> now", "stop") + "event: receipt-v2\ndata: {\"v\":2}\n\ndata: [DONE]\n\n"
    events = wire.b.chars.each_slice(7).flat_map { |piece| sse.push(piece.join) } + sse.finish
    text = events.filter_map { |e| e.json&.dig("choices", 0, "delta", "content") }.join
    assert_equal "Mail jane.doe@example.com now", text
    assert sse.completed
    assert_equal({ "v" => 2 }, sse.receipt)
  end

  def test_sse_stream_cut_mid_alias_releases_the_held_text
    sse = PrivacyRelay::SseDetokeniser.new("chat.completions", MAP)
    events = sse.push(chat_frame("Mail <EMAIL_1_yn")) + sse.finish
    text = events.filter_map { |e| e.json&.dig("choices", 0, "delta", "content") }.join
    assert_equal "Mail <EMAIL_1_yn", text, "a cut alias is shown as it came, never guessed"
    refute sse.completed, "no [DONE]: the client raises StreamError for an incomplete answer"
  end

  def test_malformed_sse
    sse = PrivacyRelay::SseDetokeniser.new("chat.completions", MAP)
    assert_equal "stream_error", assert_raises(PrivacyRelay::StreamError) { sse.push("data: {not json\n\n") }.code
    sse = PrivacyRelay::SseDetokeniser.new("chat.completions", MAP)
    sse.push("data: {\"choices\":[]")
    assert_raises(PrivacyRelay::StreamError) { sse.finish }
    sse = PrivacyRelay::SseDetokeniser.new("chat.completions", MAP)
    assert_raises(PrivacyRelay::StreamError) { sse.push("event: receipt-v2\ndata: nope\n\n") }
  end

  def test_messages_events
    sse = PrivacyRelay::SseDetokeniser.new("messages", MAP)
    wire = [
      %(event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"to <EMAIL_1"}}\n\n),
      %(event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"_ynha>"}}\n\n),
      %(event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n),
      %(event: message_stop\ndata: {"type":"message_stop"}\n\n)
    ].join
    events = sse.push(wire) + sse.finish
    assert_equal "to jane.doe@example.com", events.filter_map { |e| e.json.dig("delta", "text") }.join
    assert sse.completed
  end

  def responses_frame(event) = "event: #{event['type']}\ndata: #{JSON.generate(event)}\n\n"

  def test_responses_events_alias_cut_across_events_restored_and_renumbered
    sse = PrivacyRelay::SseDetokeniser.new("responses", MAP)
    ids = { "item_id" => "msg_1", "output_index" => 0, "content_index" => 0 }
    alias_ = MAP.keys.first
    wire = [
      responses_frame({ "type" => "response.created", "sequence_number" => 0, "response" => { "id" => "r" } }),
      responses_frame({ "type" => "response.output_text.delta", "sequence_number" => 1, **ids, "delta" => "Hi <EMAIL" }),
      responses_frame({ "type" => "response.output_text.delta", "sequence_number" => 2, **ids, "delta" => "_1_ynha> and <EMA" }),
      responses_frame({ "type" => "response.output_text.done", "sequence_number" => 3, **ids, "text" => "Hi #{alias_} and <EMA" }),
      responses_frame({ "type" => "response.function_call_arguments.delta", "sequence_number" => 4, "item_id" => "fc", "output_index" => 1,
                        "delta" => "{\"to\":\"<EMAIL_1" }),
      responses_frame({ "type" => "response.completed", "sequence_number" => 5,
                        "response" => { "output" => [{ "type" => "message", "content" => [{ "type" => "output_text", "text" => "Hi #{alias_}" }] }] } }),
      "event: receipt-v2\ndata: {\"v\":2}\n\n"
    ].join
    events = wire.b.chars.each_slice(7).flat_map { |piece| sse.push(piece.join) } + sse.finish
    values = events.reject { |e| e.event == "receipt-v2" }.map(&:json)
    text = values.select { |v| v["type"] == "response.output_text.delta" }.map { |v| v["delta"] }.join
    assert_equal "Hi jane.doe@example.com and <EMA", text, "the alias restored whole; a cut non-alias released as it came"
    assert_equal "Hi jane.doe@example.com and <EMA", values.find { |v| v["type"] == "response.output_text.done" }["text"]
    args = values.select { |v| v["type"] == "response.function_call_arguments.delta" }.map { |v| v["delta"] }.join
    assert_equal "{\"to\":\"<EMAIL_1", args, "text held back when the stream ended is released before response.completed"
    assert_equal "Hi jane.doe@example.com", values.last.dig("response", "output", 0, "content", 0, "text")
    numbers = values.map { |v| v["sequence_number"] }
    assert_equal (0...numbers.size).to_a, numbers, "synthetic deltas numbered in place, later events moved up"
    assert sse.completed
    assert_equal({ "v" => 2 }, sse.receipt)
  end

  def test_responses_stream_without_a_terminal_event_is_incomplete
    sse = PrivacyRelay::SseDetokeniser.new("responses", MAP)
    events = sse.push(responses_frame({ "type" => "response.output_text.delta", "sequence_number" => 1, "item_id" => "m", "delta" => "Hi <EMAIL_1_yn" })) + sse.finish
    assert_equal "Hi <EMAIL_1_yn", events.map { |e| e.json["delta"] }.join
    refute sse.completed
  end

  # --- JWKS refresh ------------------------------------------------------------------------------------------------

  RECEIPTS = JSON.parse(File.read(File.expand_path("../../vectors/receipts.json", __dir__)))

  def test_a_receipt_signed_by_a_key_rotated_in_later_verifies_after_one_refetch
    old_key = PrivacyRelay::Native.generate_device_key["public_jwk"].merge("kid" => "old-key")
    rotated = RECEIPTS["jwks"]
    port, seen, thread, server = stub_server([[200, {}, JSON.generate({ "keys" => [old_key] })], [200, {}, JSON.generate(rotated)]])
    client = PrivacyRelay::Client.new(gateway_url: "http://127.0.0.1:#{port}", api_key: "svc_abc", retries: 0, timeout: 2)
    assert_equal ["old-key"], client.jwks["keys"].map { |k| k["kid"] } # the identity probe: keys before the rotation
    signed = RECEIPTS["cases"].find { |c| c["expected"]["valid"] == true && c["input"].is_a?(String) }
    through_client = client.verify_receipt(signed["input"])
    refute_match(/kid/i, through_client["reason"].to_s, through_client.inspect)
    assert_equal RECEIPTS["jwks"], client.jwks, "refetched once on the unknown kid"
    verdict = PrivacyRelay::Native.verify_receipt(signed["input"], client.jwks, "now_seconds" => signed["now_seconds"])
    assert_equal true, verdict["valid"], verdict.inspect
    # a kid the gateway does not publish (forged) within the interval: no request, the verdict says it is unknown
    forged = JSON.parse(Base64.urlsafe_decode64(signed["input"])).merge("kid" => "forged")
    assert_equal false, client.verify_receipt(forged)["valid"]
    thread.join
    server.close
    assert_equal 2, seen.size, "one probe, one refetch; the forged kid fetched nothing"
  end

  # --- retries -----------------------------------------------------------------------------------------------------

  # A loopback server answering the given [status, headers, body] in order; records each request's headers.
  def stub_server(answers)
    server = TCPServer.new("127.0.0.1", 0)
    seen = []
    thread = Thread.new do
      answers.each do |status, headers, body|
        sock = server.accept
        head = +""
        head << sock.gets until head.end_with?("\r\n\r\n")
        length = head[/content-length: (\d+)/i, 1].to_i
        sock.read(length) if length.positive?
        seen << head
        extra = headers.map { |k, v| "#{k}: #{v}\r\n" }.join
        sock.write("HTTP/1.1 #{status} X\r\ncontent-type: application/json\r\ncontent-length: #{body.bytesize}\r\n#{extra}connection: close\r\n\r\n#{body}")
        sock.close
      end
    end
    [server.addr[1], seen, thread, server]
  end

  def test_retries_honour_retry_after_and_keep_the_idempotency_key
    port, seen, thread, server = stub_server([
                                               [429, { "retry-after" => "2", "x-request-id" => "r1" }, '{"error":{"code":"rate_limited","message":"slow down"}}'],
                                               [503, {}, '{"error":{"code":"upstream_unavailable","message":"x"}}'],
                                               [200, {}, '{"ok":true}']
                                             ])
    sleeps = []
    t = PrivacyRelay::Transport.new(retries: 2, timeout: 5, sleep: ->(s) { sleeps << s })
    status, _, body = t.send_request("POST", "http://127.0.0.1:#{port}/x", headers: { "idempotency-key" => "k-1" }, body: "{}")
    thread.join
    server.close
    assert_equal 200, status
    assert_equal '{"ok":true}', body
    assert_equal 2.0, sleeps[0]
    assert_operator sleeps[1], :<=, 1.0 # full jitter, 0.5 * 2^1
    assert_equal 3, seen.size
    assert(seen.all? { |h| h =~ /idempotency-key: k-1/i })
  end

  def test_rate_limit_error_after_retries
    port, _, thread, server = stub_server([[429, { "retry-after" => "120", "x-request-id" => "req_9" }, '{"error":{"code":"rate_limited","message":"slow"}}']])
    t = PrivacyRelay::Transport.new(retries: 3, timeout: 5, sleep: ->(_) { flunk "a wait over 60 s is not made" })
    e = assert_raises(PrivacyRelay::RateLimitError) { t.send_request("GET", "http://127.0.0.1:#{port}/x", headers: {}) }
    thread.join
    server.close
    assert_equal 429, e.status
    assert_equal "rate_limited", e.code
    assert_equal "req_9", e.request_id
    assert_equal 120.0, e.retry_after_seconds
  end

  def test_connection_refused_is_a_connection_error
    server = TCPServer.new("127.0.0.1", 0)
    port = server.addr[1]
    server.close
    t = PrivacyRelay::Transport.new(retries: 1, timeout: 2, sleep: ->(_) {})
    e = assert_raises(PrivacyRelay::ConnectionError) { t.send_request("GET", "http://127.0.0.1:#{port}/", headers: {}) }
    assert_equal 0, e.status
  end

  def test_a_silent_server_is_a_timeout_error
    server = TCPServer.new("127.0.0.1", 0)
    held = []
    thread = Thread.new { 2.times { held << server.accept } } # accepts, never answers
    t = PrivacyRelay::Transport.new(retries: 1, timeout: 0.3, sleep: ->(_) {})
    e = assert_raises(PrivacyRelay::TimeoutError) { t.send_request("GET", "http://127.0.0.1:#{server.addr[1]}/", headers: {}) }
    assert_equal "timeout", e.code
    assert_equal 0, e.status
    thread.join(2)
    held.each(&:close)
    server.close
  end

  def test_traceparent_is_w3c_shaped_and_passed_through
    assert_match(/\A00-[0-9a-f]{32}-[0-9a-f]{16}-01\z/, PrivacyRelay::Transport.traceparent)
    port, seen, thread, server = stub_server([[200, {}, '{"data":[]}']])
    client = PrivacyRelay::Client.new(gateway_url: "http://127.0.0.1:#{port}", api_key: "svc_abc", retries: 0)
    client.instance_variable_set(:@jwks, { "keys" => [] }) # skip the identity probe: this stub is not a gateway
    client.models.list(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    thread.join
    server.close
    assert_match(/traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01/i, seen[0])
  end

  def test_retry_after_http_date
    now = Time.utc(2026, 1, 1, 0, 0, 0)
    assert_equal 30.0, PrivacyRelay::Errors.retry_after_seconds((now + 30).httpdate, now: now)
    assert_nil PrivacyRelay::Errors.retry_after_seconds("soon")
  end
end
