package dev.privacyrelay;

/**
 * {@code client.messages()}: Anthropic messages ({@code POST /api/v1/messages}) and their token count.
 * {@code createStreaming} yields Anthropic events (content_block_delta text restored as it arrives).
 */
public final class MessageService extends RouteService {
    MessageService(RelayClient client) {
        super(client, "messages", "client.messages().createStreaming");
    }

    /** {"input_tokens"} of a messages request ({@code POST /api/v1/messages/count_tokens}), tokenised here first. */
    public RelayResponse countTokens(Object body) {
        return client.relayJson("messages.count_tokens", body, CallOptions.NONE);
    }
}
