package dev.privacyrelay;

/** {@code client.chat()}: groups the chat routes. */
public final class ChatService {
    private final ChatCompletionService completions;

    ChatService(RelayClient client) {
        this.completions = new ChatCompletionService(client);
    }

    public ChatCompletionService completions() {
        return completions;
    }
}
