package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One event of a streamed answer, originals restored: an OpenAI {@code chat.completion.chunk} ({@code event} null), an
 * Anthropic event or an OpenAI Responses event ({@code event} its SSE name). {@code text} is the restored text it adds
 * (a chat choice's delta.content, a text_delta, a response.output_text.delta; "" for others), {@code data} the whole
 * event.
 */
public record StreamEvent(String event, JsonNode data, String text) {}
