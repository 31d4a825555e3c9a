package dev.privacyrelay;

/** {@code client.messages()}: Anthropic messages ({@code POST /api/v1/messages}) and their token count. */
public final class MessageService {
    private final RelayClient client;

    MessageService(RelayClient client) {
        this.client = client;
    }

    /** A message, originals restored; its receipt verified. */
    public RelayResponse create(Object body) {
        return create(body, CallOptions.NONE);
    }

    public RelayResponse create(Object body, CallOptions options) {
        ChatCompletionService.refuseStreamFlag(client.toBody(body), "client.messages().createStreaming");
        return client.relayJson("messages", body, options);
    }

    /** A streamed message: Anthropic events (content_block_delta text restored as it arrives). Close it. */
    public RelayStream createStreaming(Object body) {
        return createStreaming(body, CallOptions.NONE);
    }

    public RelayStream createStreaming(Object body, CallOptions options) {
        return client.relayStream("messages", body, options);
    }

    /** {"input_tokens"} of a messages request ({@code POST /api/v1/messages/count_tokens}), tokenised here first. */
    public RelayResponse countTokens(Object body) {
        return client.relayJson("messages.count_tokens", body, CallOptions.NONE);
    }
}
