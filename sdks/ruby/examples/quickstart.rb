# Quickstart: GATEWAY_URL and a 0600 key file (default ~/.config/privacy-relay/gateway-key).
require "privacy_relay"

client = PrivacyRelay::Client.new(
  gateway_url: ENV.fetch("GATEWAY_URL", "http://127.0.0.1:8080"),
  api_key_file: ENV.fetch("PRIVACY_RELAY_KEY_FILE", "~/.config/privacy-relay/gateway-key")
)
answer = client.chat.completions.create(model: ENV.fetch("MODEL", "local-chat"),
                                        messages: [{ role: "user", content: "Email jane.doe@example.com about Friday." }])
puts answer.dig("choices", 0, "message", "content")
puts "receipt verified: #{answer.receipt_verified}"
client.chat.completions.create(model: ENV.fetch("MODEL", "local-chat"), stream: true,
                               messages: [{ role: "user", content: "Call +44 20 7946 0958." }]).each do |chunk|
  print chunk.dig("choices", 0, "delta", "content")
end
puts
