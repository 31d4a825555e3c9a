# frozen_string_literal: true

require_relative "test_helper"
require_relative "gateway"

# client.responses.create (JSON and streamed) and client.messages.count_tokens against a real gateway and the fake
# provider (5-character SSE pieces, so aliases are cut across events): the provider sees only aliases, the
# originals come back here, receipts verify.
class TestEndToEndResponses < Minitest::Test
  EMAIL = "jane.doe@example.com"
  PROMPT = "Write to #{EMAIL} about Friday."

  def relay = TestGateway.shared

  def setup
    @api_key, = relay.funded_key
    relay.reset_provider
    @client = PrivacyRelay::Client.new(gateway_url: relay.url, api_key: @api_key, names: "off", retries: 0)
  end

  def output_text(response)
    response["output"].select { |i| i["type"] == "message" }.flat_map { |i| i["content"] }.select { |c| c["type"] == "output_text" }.map { |c| c["text"] }.join
  end

  def sent_bodies
    bodies = relay.received.map { |r| r["body"].to_s }
    refute_empty bodies
    bodies.each { |b| refute_includes b, EMAIL }
    bodies
  end

  def test_responses_json_sends_only_aliases_and_answers_with_the_originals
    answer = @client.responses.create(model: "local-chat", instructions: "You write to #{EMAIL}.", input: PROMPT)
    assert_equal "Echo: #{PROMPT}", output_text(answer)
    assert_equal "You write to #{EMAIL}.", answer["instructions"]
    assert(relay.received.all? { |r| r["path"] == "/v1/responses" })
    assert_match(/<EMAIL_/, sent_bodies.first)
    refute_includes JSON.generate(answer.tokenised_request), EMAIL
    refute_nil answer.request_id
    assert_equal true, answer.receipt_verified, answer.receipt_verification.inspect
  end

  def test_responses_stream_restores_aliases_cut_across_events_and_verifies_its_receipt
    stream = @client.responses.create(model: "local-chat", input: [{ role: "user", content: PROMPT }], stream: true)
    assert_nil stream.receipt
    events = stream.to_a
    types = events.map { |e| e["type"] }
    text = events.select { |e| e["type"] == "response.output_text.delta" }.map { |e| e["delta"] }.join
    assert_equal "Echo: #{PROMPT}", text
    assert_equal ["Echo: #{PROMPT}"], events.select { |e| e["type"] == "response.output_text.done" }.map { |e| e["text"] }
    assert_equal "Echo: #{PROMPT}", output_text(events.find { |e| e["type"] == "response.completed" }["response"])
    assert_equal "response.completed", types.last
    refute_includes types, "receipt-v2"
    numbers = events.map { |e| e["sequence_number"] }
    assert_equal numbers.sort, numbers
    assert_equal numbers.uniq, numbers
    sent_bodies
    refute_nil stream.request_id
    assert_equal true, stream.receipt_verified, stream.receipt_verification.inspect
  end

  def test_messages_count_tokens_counts_the_tokenised_request_unbilled_and_unreceipted
    before = @client.rest.self.balance["balance_usd"]
    answer = @client.messages.count_tokens(model: "local-chat", messages: [{ role: "user", content: PROMPT }], system: "Reply to #{EMAIL}")
    assert_kind_of Integer, answer["input_tokens"]
    assert_operator answer["input_tokens"], :>, 0
    assert_nil answer.receipt
    assert_nil answer.receipt_verified
    sent = JSON.generate(answer.tokenised_request)
    assert_match(/<EMAIL_/, sent)
    refute_includes sent, EMAIL
    assert(relay.received.all? { |r| r["path"] == "/v1/messages/count_tokens" })
    sent_bodies
    assert_equal before, @client.rest.self.balance["balance_usd"]
  end
end
