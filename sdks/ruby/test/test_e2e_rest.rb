# frozen_string_literal: true

require_relative "test_helper"
require_relative "gateway"
require "socket"
require "timeout"
require "bigdecimal"

# The REST capability set, a webhook delivered by the gateway and verified here, bad input at the gateway.
class TestEndToEndRest < Minitest::Test
  ABILITIES = %w[ability:keys.read ability:keys.write ability:billing.read ability:billing.write webhooks.manage webhooks.read].freeze

  def relay = TestGateway.shared

  def setup
    @api_key, @prefix = relay.funded_key
    @portal = relay.portal_token(@prefix, ABILITIES)
    @client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, portal_token: @portal, names: "off", retries: 0)
  end

  def test_self_keys_billing_receipts_transparency
    assert_equal @prefix, @client.rest.self.key["key_prefix"]
    refute_nil @client.rest.self.balance
    mine = @client.rest.keys.list["keys"].find { |k| k["key_prefix"] == @prefix }
    refute_nil mine
    assert_equal({ "permissions" => mine["permissions"], "models" => mine["models"] }, @client.rest.keys.scopes(mine["id"]))
    refute_nil @client.rest.billing.balance
    answer = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }])
    assert_equal true, @client.rest.receipts.verify(answer.receipt)["valid"]
    jti = answer.receipt["jti"]
    assert_equal jti, @client.rest.receipts.get(jti).then { |r| r["jti"] || r.dig("receipt", "jti") }
    sth = @client.rest.receipts.signed_tree_head
    assert_operator sth["tree_size"], :>=, 1
    proof = @client.rest.receipts.inclusion_proof(jti)
    verdict = PrivacyRelay.verify_inclusion_proof(proof, nil, @client.jwks, receipt: answer.receipt)
    assert_equal true, verdict["valid"], verdict.inspect
  end

  def test_the_log_a_kept_tree_head_saw_is_a_prefix_of_the_later_log
    @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "first" }])
    kept = @client.rest.receipts.signed_tree_head
    @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "again" }])
    proof = @client.rest.receipts.consistency_proof(kept["tree_size"])
    assert_equal kept["tree_size"], proof["first"]
    verdict = PrivacyRelay.verify_consistency_proof(proof, kept, @client.jwks)
    assert_equal true, verdict["valid"], verdict.inspect
    forked = kept.merge("root_hash" => kept["root_hash"].tr("0-9a-f", "1-9a-f0"))
    assert_equal false, PrivacyRelay.verify_consistency_proof(proof, forked, @client.jwks)["valid"], "a head the gateway did not sign"
  end

  def test_key_lifecycle_create_replayed_update_rotate_revoke
    key = "ruby-key-#{Process.pid}-#{rand(1 << 30)}"
    created = @client.rest.keys.create(name: "ruby-sdk", idempotency_key: key)
    assert_match(/\Asvc_/, created["api_key"])
    assert_equal created["api_key"], @client.rest.keys.create(name: "ruby-sdk", idempotency_key: key)["api_key"], "replayed, not applied twice"
    assert_equal 1, @client.rest.keys.list["keys"].count { |k| k["id"] == created["id"] }
    assert_equal "ruby-sdk-2", @client.rest.keys.update(created["id"], { "name" => "ruby-sdk-2" })["name"]
    rotated = @client.rest.keys.rotate(created["id"])
    assert_equal created["id"], rotated["replaces"]
    refute_equal created["api_key"], rotated["api_key"]
    revoked = @client.rest.keys.revoke(created["id"])
    assert_equal "revoked", revoked["status"]
    # the revoked key is refused at the relay; the rotated one works
    e = assert_raises(PrivacyRelay::AuthenticationError) do
      PrivacyRelay::Client.new(gateway_url: relay.url, api_key: created["api_key"], names: "off", retries: 0).rest.self.key
    end
    assert_equal 401, e.status
    assert_equal rotated["key_prefix"], PrivacyRelay::Client.new(gateway_url: relay.url, api_key: rotated["api_key"], retries: 0).rest.self.key["key_prefix"]
    assert_nil @client.rest.keys.scopes("key_does_not_exist")
  end

  def test_receipts_list_verify_online_and_countersign
    answer = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }])
    assert(@client.rest.receipts.list(limit: 10)["receipts"].any? { |r| JSON.generate(r).include?(answer.receipt["jti"]) })
    assert_equal true, @client.rest.receipts.verify_online(answer.receipt)["valid"]
    assert_equal false, @client.rest.receipts.verify_online(answer.receipt.merge("model" => "other"))["valid"]
    # the relay's countersignature binds the attestation this client sent; verified offline with it
    refute_nil answer.countersignature
    bound = PrivacyRelay.verify_receipt(answer.countersignature, @client.jwks, attestation: answer.attestation)
    assert_equal true, bound["valid"], bound.inspect
    other = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "another" }])
    assert_equal false, PrivacyRelay.verify_receipt(answer.countersignature, @client.jwks, attestation: other.attestation)["valid"]
    signed = @client.rest.receipts.countersign({ "attestation" => answer.attestation, "provider" => "local", "model" => "local-chat",
                                                 "hash_upstream_request" => answer.receipt["hash_upstream_request"],
                                                 "hash_upstream_response" => answer.receipt["hash_upstream_response"] })
    assert_equal "v3-countersignature", signed["v"]
    assert_equal true, @client.verify_receipt(signed)["valid"]
  end

  def test_billing_top_up_checkout_ledger_usage_and_a_bad_licence
    before = BigDecimal(@client.rest.billing.balance["balance_usd"])
    checkout = @client.rest.billing.top_up(amount_usd: "5")
    assert_equal "pending", checkout["status"]
    assert_equal true, @client.rest.billing.complete_dev_checkout(checkout["checkout_id"])["credited"]
    assert_equal before + 5, BigDecimal(@client.rest.billing.balance["balance_usd"])
    assert(@client.rest.billing.ledger["entries"].any? { |e| e["amount_usd"] == "5.000000" })
    @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }])
    assert_operator @client.rest.billing.usage["summary"].sum { |d| d["calls"] }, :>=, 1
    assert_operator @client.rest.self.usage["summary"].sum { |d| d["calls"] }, :>=, 1
    e = assert_raises(PrivacyRelay::InvalidRequestError) { @client.rest.billing.redeem_licence(code: "NOT-A-LICENCE") }
    assert_equal [400, "invalid_licence"], [e.status, e.code]
  end

  def test_demo_key_is_relay_only
    demo = @client.rest.demo_key
    assert_equal "demo", demo["tier"]
    c = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: demo["api_key"], names: "off", retries: 0)
    assert_kind_of Array, c.models.list["data"]
  end

  def test_webhook_endpoint_lifecycle_and_delivery_replay
    closed = TCPServer.new("127.0.0.1", 0).then { |s| s.addr[1].tap { s.close } } # nothing listens: the delivery fails and waits
    hooks = @client.rest.webhooks
    endpoint = hooks.endpoints.create(url: "http://127.0.0.1:#{closed}/hooks", events: ["webhook.test"])
    assert(hooks.endpoints.list["endpoints"].any? { |x| x["id"] == endpoint["id"] })
    refute hooks.endpoints.get(endpoint["id"]).key?("secret"), "the secret is shown at creation and rotation only"
    assert_equal ["webhook.*"], hooks.endpoints.update(endpoint["id"], { "events" => ["webhook.*"] })["events"]
    e = assert_raises(PrivacyRelay::InvalidRequestError) { hooks.endpoints.update(endpoint["id"], { "events" => ["no.such_event"] }) }
    assert_equal 400, e.status
    rotated = hooks.endpoints.rotate_secret(endpoint["id"])
    refute_equal endpoint["secret"], rotated["secret"]
    delivery = hooks.endpoints.test(endpoint["id"])
    assert_equal "webhook.test", hooks.deliveries.get(delivery["id"])["event"]
    replay = hooks.deliveries.replay(delivery["id"])
    assert_equal delivery["id"], replay["replay_of"]
    assert_equal "active", hooks.endpoints.resume(endpoint["id"])["status"]
    assert_nil hooks.endpoints.delete(endpoint["id"])
    assert_equal 404, assert_raises(PrivacyRelay::NotFoundError) { hooks.endpoints.get(endpoint["id"]) }.status
  end

  # The gateway rotates its receipt key after this client fetched the JWKS: the next receipt names a kid the client
  # has not seen; the client fetches the JWKS again and the receipt verifies.
  def test_a_receipt_signed_after_a_gateway_key_rotation_verifies
    before = @client.jwks["keys"].map { |k| k["kid"] }
    admin = relay.portal_token(@prefix, ["ability:admin"])
    status, rotation = relay.http("POST", "#{relay.url}/api/admin/receipts/keys/rotate", {}, "authorization" => "Bearer #{admin}")
    assert_equal 200, status, rotation.inspect
    refute_includes before, rotation["kid"]
    answer = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "after the rotation" }])
    assert_equal rotation["kid"], answer.receipt["kid"]
    assert_equal true, answer.receipt_verified, answer.receipt_verification.inspect
    assert_includes @client.jwks["keys"].map { |k| k["kid"] }, rotation["kid"]
  end

  def test_a_tampered_receipt_is_invalid
    answer = @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi" }])
    tampered = answer.receipt.merge("output_tokens" => answer.receipt["output_tokens"].to_i + 1)
    verdict = @client.verify_receipt(tampered)
    assert_equal false, verdict["valid"]
    refute_nil verdict["reason"]
  end

  def test_portal_routes_need_a_portal_token_and_a_bad_one_is_401
    no_portal = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, retries: 0)
    assert_raises(PrivacyRelay::ConfigurationError) { no_portal.rest.keys.list }
    bad = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, portal_token: "spt_#{'a' * 52}", retries: 0)
    e = assert_raises(PrivacyRelay::AuthenticationError) { bad.rest.billing.balance }
    assert_equal 401, e.status
    refute_nil e.request_id
  end

  def test_self_service_key
    key = @client.rest.self_service_key(idempotency_key: "ruby-ss-#{Process.pid}-#{rand(1 << 30)}")
    assert_match(/\Asvc_/, key["api_key"])
  end

  def test_a_field_the_gateway_egress_policy_refuses_is_never_forwarded
    relay.reset_provider
    e = assert_raises(PrivacyRelay::InvalidRequestError) do
      @client.chat.completions.create(model: "local-chat", messages: [{ role: "user", content: "hi jane.doe@example.com" }], surprise_field: "x")
    end
    assert_equal 400, e.status
    assert_includes %w[egress_policy_violation unsupported_field], e.code
    assert_empty relay.received
  end

  def test_a_webhook_test_event_is_delivered_verified_and_deduplicated
    server = TCPServer.new("127.0.0.1", 0)
    got = Queue.new
    thread = Thread.new do
      sock = server.accept
      head = +""
      head << sock.gets until head.end_with?("\r\n\r\n")
      length = head[/content-length: (\d+)/i, 1].to_i
      body = length.positive? ? sock.read(length) : ""
      headers = head.lines[1..].filter_map { |l| l.chomp.split(": ", 2) if l.include?(": ") }.to_h
      sock.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
      sock.close
      got << [body, headers]
    end
    endpoint = @client.rest.webhooks.endpoints.create(url: "http://127.0.0.1:#{server.addr[1]}/hooks", events: ["webhook.test"])
    @client.rest.webhooks.endpoints.test(endpoint["id"])
    body, headers = Timeout.timeout(30) { got.pop }
    thread.join
    server.close
    assert_equal({ "ok" => true }, PrivacyRelay.verify_webhook(body, headers, endpoint["secret"]))
    forged = PrivacyRelay.verify_webhook(body.sub("webhook.test", "webhook.tesT"), headers, endpoint["secret"])
    assert_equal "bad_signature", forged["code"]
    stale = PrivacyRelay.verify_webhook(body, headers, endpoint["secret"], now_seconds: Time.now.to_i + 3600)
    assert_equal "stale_timestamp", stale["code"]
    wrong = PrivacyRelay.verify_webhook(body, headers, "whsec_wrong")
    assert_equal false, wrong["ok"]
    dedupe = PrivacyRelay::WebhookDeduper.new
    id = PrivacyRelay::WebhookDeduper.event_id_of(body, headers)
    refute_nil id
    refute dedupe.seen(id)
    assert dedupe.seen(id)
    assert_includes JSON.generate(@client.rest.webhooks.deliveries.list), "webhook.test"
  end
end
