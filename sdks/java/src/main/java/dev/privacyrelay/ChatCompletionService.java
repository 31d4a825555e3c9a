package dev.privacyrelay;

/**
 * {@code client.chat().completions()}: OpenAI chat completions ({@code POST /api/v1/chat/completions}). The body is
 * the OpenAI request (a Map or an ObjectNode); values in it are tokenised on this device before it leaves.
 * {@code createStreaming} yields chat.completion.chunk events, aliases restored as they arrive.
 */
public final class ChatCompletionService extends RouteService {
    ChatCompletionService(RelayClient client) {
        super(client, "chat.completions", "client.chat().completions().createStreaming");
    }
}
