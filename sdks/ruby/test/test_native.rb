# frozen_string_literal: true

require_relative "test_helper"

class TestNative < Minitest::Test
  N = PrivacyRelay::Native

  def test_engine_info_and_abi
    info = N.engine_info
    assert_equal 1, info["abi_version"]
    assert_match(/\A[0-9a-f]{64}\z/, info["sha256"])
    assert_includes info["routes"], "chat.completions"
  end

  def test_nil_argument_is_a_typed_error_not_a_crash
    e = assert_raises(PrivacyRelay::EngineError) { N.tokenise_request(nil, "{}") }
    assert_equal "null_argument", e.code
    e = assert_raises(PrivacyRelay::EngineError) { N.detokenise(nil, []) }
    assert_equal "null_argument", e.code
  end

  def test_non_json_is_invalid_json
    e = assert_raises(PrivacyRelay::EngineError) { N.tokenise_request("chat.completions", "not json") }
    assert_equal "invalid_json", e.code
    e = assert_raises(PrivacyRelay::EngineError) { N.canonicalize("{") }
    assert_equal "invalid_json", e.code
  end

  def test_invalid_utf8_and_nul
    e = assert_raises(PrivacyRelay::EngineError) { N.tokenise_text("caf\xC3".b) }
    assert_equal "invalid_utf8", e.code
    e = assert_raises(PrivacyRelay::EngineError) { N.tokenise_text("a\0b") }
    assert_equal "invalid_argument", e.code
  end

  def test_unknown_option_and_route
    assert_equal "invalid_argument", assert_raises(PrivacyRelay::EngineError) { N.tokenise_text("x", { "nope" => 1 }) }.code
    assert_equal "invalid_argument", assert_raises(PrivacyRelay::EngineError) { N.tokenise_request("nope", "{}") }.code
  end

  def test_bad_body_is_invalid_request_400
    e = assert_raises(PrivacyRelay::InvalidRequestError) { N.tokenise_request("chat.completions", { "model" => "m", "messages" => 3 }) }
    assert_equal 400, e.status
  end

  def test_panic_inside_the_engine_is_internal_error
    e = assert_raises(PrivacyRelay::EngineError) { N.debug_panic }
    assert_equal "internal_error", e.code
  end

  def test_error_code_names
    assert_equal "invalid_json", N.error_code_name(3)
    assert_equal "internal_error", N.error_code_name(100)
  end

  def test_detokeniser_lifecycle
    d = N::Detokeniser.new([["<EMAIL_1_ynha>", "jane@example.com"]])
    assert_equal "to ", d.push("to <EMA")
    assert_equal "jane@example.com ok", d.push("IL_1_ynha> ok")
    assert_equal "", d.push("<EM")
    assert_equal "<EM", d.finish
    assert d.closed?
    e = assert_raises(PrivacyRelay::EngineError) { d.push("more") }
    assert_equal "detokeniser_closed", e.code
    assert_raises(PrivacyRelay::EngineError) { d.finish }
    d.close # closing twice is harmless
  end

  def test_detokeniser_bad_map_and_many_handles
    assert_equal "invalid_json", assert_raises(PrivacyRelay::EngineError) { N::Detokeniser.new("[") }.code
    1000.times { N::Detokeniser.new({ "<EMAIL_1_ynha>" => "x" }).close }
    200.times { N::Detokeniser.new({ "<EMAIL_1_ynha>" => "x" }) } # left to the finalizer
    GC.start
  end

  # Ruby may run a finalizer in trap context (a signal handler), where no Mutex can be taken: freeing a forgotten
  # handle there must not raise ThreadError (it did, printed as "Exception in finalizer" under minitest's handler).
  def test_forgotten_detokeniser_is_freed_from_trap_context
    d = N::Detokeniser.new({ "<EMAIL_1_ynha>" => "x" })
    release = N::Detokeniser.releaser(d.instance_variable_get(:@state))
    raised = :not_run
    previous = Signal.trap("USR2") do
      release.call
      raised = nil
    rescue StandardError, ThreadError => e
      raised = e
    end
    Process.kill("USR2", Process.pid)
    deadline = Time.now + 5
    sleep 0.01 while raised == :not_run && Time.now < deadline
    Signal.trap("USR2", previous || "DEFAULT")
    assert_nil raised
    assert d.closed?
  end
end

class TestEngine < Minitest::Test
  def test_prepare_attests_as_relay_rb_with_the_core_sha256
    engine = PrivacyRelay::Engine.new(names: "off")
    p = engine.prepare("chat.completions", { "model" => "m", "messages" => [{ "role" => "user", "content" => "Mail jane.doe@example.com" }] })
    assert_equal "relay-rb/#{PrivacyRelay::VERSION}", p.headers["x-service-engine"]
    envelope = JSON.parse(p.headers["x-service-attestation"].unpack1("m"))
    claims = envelope["claims"]["v3-attestation"]
    assert_equal "relay-rb", claims["engine"]["id"]
    assert_equal PrivacyRelay::Native.engine_info["sha256"], claims["engine"]["sha256"]
    assert_equal({ "EMAIL" => 1 }, claims["detectors_fired"])
    refute_includes p.body_text, "jane.doe@example.com"
    assert_equal "jane.doe@example.com", p.map.values.first
  end

  def test_same_idempotency_key_same_bytes
    engine = PrivacyRelay::Engine.new(names: "off")
    body = { "model" => "m", "messages" => [{ "role" => "user", "content" => "Mail jane.doe@example.com" }] }
    assert_equal engine.prepare("chat.completions", body, "k1").body_text, engine.prepare("chat.completions", body, "k1").body_text
    refute_equal engine.prepare("chat.completions", body).body_text, engine.prepare("chat.completions", body).body_text
  end
end
