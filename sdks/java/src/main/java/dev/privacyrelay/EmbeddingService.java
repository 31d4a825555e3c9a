package dev.privacyrelay;

/**
 * {@code client.embeddings()}: OpenAI embeddings ({@code POST /api/v1/embeddings}). Values get device-stable aliases,
 * so the same value embeds the same way across calls.
 */
public final class EmbeddingService {
    private final RelayClient client;

    EmbeddingService(RelayClient client) {
        this.client = client;
    }

    public RelayResponse create(Object body) {
        return create(body, CallOptions.NONE);
    }

    public RelayResponse create(Object body, CallOptions options) {
        return client.relayJson("embeddings", body, options);
    }
}
