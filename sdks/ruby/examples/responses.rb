# The Responses API and token counting through the relay: GATEWAY_URL and a 0600 key file as in quickstart.rb.
require "privacy_relay"

client = PrivacyRelay::Client.new(
  gateway_url: ENV.fetch("GATEWAY_URL", "http://127.0.0.1:8080"),
  api_key_file: ENV.fetch("PRIVACY_RELAY_KEY_FILE", "~/.config/privacy-relay/gateway-key")
)
model = ENV.fetch("MODEL", "local-chat")

stream = client.responses.create(model: model, input: "Draft a reply to jane.doe@example.com.", stream: true)
stream.each do |event|
  print event["delta"] if event["type"] == "response.output_text.delta" # originals restored as they arrive
end
puts
puts "receipt verified: #{stream.receipt_verified}"

count = client.messages.count_tokens(model: model, messages: [{ role: "user", content: "Call +44 20 7946 0958." }])
puts "input tokens: #{count['input_tokens']}"
