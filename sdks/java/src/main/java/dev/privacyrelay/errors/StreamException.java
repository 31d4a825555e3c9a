package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** A streamed answer that was malformed (a frame that is not JSON, a frame cut in two) or ended before its end marker (the upstream cut it; an alias cut there is never shown half). Status is the stream's HTTP status. */
public final class StreamException extends RelayException {
    public StreamException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
