package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.errors.ConfigurationException;

/**
 * What {@link ChatCompletionService}, {@link MessageService} and {@link ResponseService} share: a call of one
 * gateway route, answered whole ({@code create}) or streamed ({@code createStreaming}). The body is the provider's
 * request (a Map or an ObjectNode); values in it are tokenised on this device before it leaves.
 */
abstract class RouteService {
    final RelayClient client;
    private final String route;
    private final String streamingCall;

    /** {@code streamingCall} names this service's createStreaming in the error a "stream": true body gets. */
    RouteService(RelayClient client, String route, String streamingCall) {
        this.client = client;
        this.route = route;
        this.streamingCall = streamingCall;
    }

    /** The answer, originals restored; its receipt verified. */
    public RelayResponse create(Object body) {
        return create(body, CallOptions.NONE);
    }

    public RelayResponse create(Object body, CallOptions options) {
        refuseStreamFlag(client.toBody(body), streamingCall);
        return client.relayJson(route, body, options);
    }

    /** The streamed answer, originals restored as its events arrive; the receipt follows the last event. Close it. */
    public RelayStream createStreaming(Object body) {
        return createStreaming(body, CallOptions.NONE);
    }

    public RelayStream createStreaming(Object body, CallOptions options) {
        return client.relayStream(route, body, options);
    }

    /** A streamed call has a return type of its own, so a body asking for one is refused here, not half-served. */
    private static void refuseStreamFlag(JsonNode body, String instead) {
        JsonNode s = body.get("stream");
        if (s != null && s.asBoolean(false)) throw new ConfigurationException("For a streamed call use " + instead + ".");
    }
}
