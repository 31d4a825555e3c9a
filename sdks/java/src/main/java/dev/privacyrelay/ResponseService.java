package dev.privacyrelay;

/**
 * {@code client.responses()}: the OpenAI Responses route ({@code POST /api/v1/responses}). On an answer,
 * {@link RelayResponse#text()} joins its output_text parts. {@code createStreaming} yields the Responses events
 * (response.output_text.delta, ..., response.completed), deltas restored as they arrive; the receipt comes as an
 * {@code event: receipt-v2} frame after the last event.
 */
public final class ResponseService extends RouteService {
    ResponseService(RelayClient client) {
        super(client, "responses", "client.responses().createStreaming");
    }
}
