package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.errors.ConfigurationException;

/**
 * {@code client.chat().completions()}: OpenAI chat completions ({@code POST /api/v1/chat/completions}). The body is
 * the OpenAI request (a Map or an ObjectNode); values in it are tokenised on this device before it leaves.
 */
public final class ChatCompletionService {
    private final RelayClient client;

    ChatCompletionService(RelayClient client) {
        this.client = client;
    }

    /** A chat completion, originals restored; its receipt verified. */
    public RelayResponse create(Object body) {
        return create(body, CallOptions.NONE);
    }

    public RelayResponse create(Object body, CallOptions options) {
        refuseStreamFlag(client.toBody(body), "client.chat().completions().createStreaming");
        return client.relayJson("chat.completions", body, options);
    }

    /** A streamed chat completion: chat.completion.chunk events, aliases restored as they arrive. Close it. */
    public RelayStream createStreaming(Object body) {
        return createStreaming(body, CallOptions.NONE);
    }

    public RelayStream createStreaming(Object body, CallOptions options) {
        return client.relayStream("chat.completions", body, options);
    }

    static void refuseStreamFlag(JsonNode body, String instead) {
        JsonNode s = body.get("stream");
        if (s != null && s.asBoolean(false)) throw new ConfigurationException("For a streamed call use " + instead + ".");
    }
}
