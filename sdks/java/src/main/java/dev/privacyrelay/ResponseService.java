package dev.privacyrelay;

/** {@code client.responses()}: the OpenAI Responses route ({@code POST /api/v1/responses}). */
public final class ResponseService {
    private final RelayClient client;

    ResponseService(RelayClient client) {
        this.client = client;
    }

    /** A response, originals restored; {@link RelayResponse#text()} joins its output_text parts. */
    public RelayResponse create(Object body) {
        return create(body, CallOptions.NONE);
    }

    public RelayResponse create(Object body, CallOptions options) {
        ChatCompletionService.refuseStreamFlag(client.toBody(body), "client.responses().createStreaming");
        return client.relayJson("responses", body, options);
    }

    /**
     * A streamed response: the Responses events (response.output_text.delta, ..., response.completed), deltas
     * restored as they arrive; the receipt comes as an {@code event: receipt-v2} frame after the last event. Close it.
     */
    public RelayStream createStreaming(Object body) {
        return createStreaming(body, CallOptions.NONE);
    }

    public RelayStream createStreaming(Object body, CallOptions options) {
        return client.relayStream("responses", body, options);
    }
}
