package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** Reads a gateway error answer into the exception of its status. */
public final class ApiErrors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ApiErrors() {}

    /**
     * The typed exception of an answer with status >= 400: {@code {error:{code,message,details}}}, Anthropic's
     * {@code {type:"error",error:{type,message}}} and OAuth's {@code {error, error_description}} are read.
     */
    public static ApiException fromAnswer(int status, String requestId, String retryAfterHeader, byte[] body) {
        return fromAnswer(status, requestId, retryAfterHeader, body, null);
    }

    /** As above, with the X-Service-Receipt-Failed header value (standard base64 JSON) decoded onto the exception. */
    public static ApiException fromAnswer(int status, String requestId, String retryAfterHeader, byte[] body, String failedReceiptHeader) {
        ApiException e = typed(status, requestId, retryAfterHeader, body);
        if (failedReceiptHeader != null && !failedReceiptHeader.isBlank()) {
            try {
                JsonNode r = JSON.readTree(java.util.Base64.getDecoder().decode(failedReceiptHeader.strip()));
                if (r != null && r.isObject()) e.failedReceipt(r);
            } catch (IOException | IllegalArgumentException unreadable) {
                // an unreadable header is no receipt
            }
        }
        return e;
    }

    private static ApiException typed(int status, String requestId, String retryAfterHeader, byte[] body) {
        JsonNode doc = null;
        try {
            doc = body == null || body.length == 0 ? null : JSON.readTree(body);
        } catch (IOException notJson) {
            doc = null;
        }
        String code = null;
        String message = null;
        JsonNode details = null;
        if (doc != null && doc.isObject()) {
            JsonNode inner = doc.get("error");
            if (inner != null && inner.isObject()) {
                code = text(inner.get("code"));
                if (code == null) code = text(inner.get("type"));
                message = text(inner.get("message"));
                details = inner.get("details");
            } else if (inner != null && inner.isTextual()) {
                code = inner.asText();
                message = text(doc.get("error_description"));
            }
            if (requestId == null) requestId = text(doc.get("request_id"));
        }
        if (code == null) code = "http_" + status;
        if (message == null || message.isEmpty()) message = "The gateway answered " + status + ".";
        message = code + " (HTTP " + status + "): " + message + (requestId == null ? "" : " [request " + requestId + "]");
        switch (status) {
            case 400: return new InvalidRequestException(code, message, status, requestId, details);
            case 401: return new AuthenticationException(code, message, status, requestId, details);
            case 402: return new InsufficientBalanceException(code, message, status, requestId, details);
            case 403: return new PermissionDeniedException(code, message, status, requestId, details);
            case 404: return new NotFoundException(code, message, status, requestId, details);
            case 409: return new ConflictException(code, message, status, requestId, details);
            case 415: return new UnsupportedContentException(code, message, status, requestId, details);
            case 428: return new PretokenisationRequiredException(code, message, status, requestId, details);
            case 429: return new RateLimitException(code, message, requestId, details, retryAfter(retryAfterHeader));
            default:
                if (status >= 500) return new ServerException(code, message, status, requestId, details);
                return new ApiException(code, message, status, requestId, details);
        }
    }

    /** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
    public static Duration retryAfter(String value) {
        if (value == null || value.isBlank()) return null;
        String v = value.trim();
        try {
            double seconds = Double.parseDouble(v);
            return seconds < 0 ? null : Duration.ofMillis((long) (seconds * 1000));
        } catch (NumberFormatException notSeconds) {
            try {
                Duration d = Duration.between(Instant.now(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
                return d.isNegative() ? Duration.ZERO : d;
            } catch (DateTimeParseException notADate) {
                return null;
            }
        }
    }

    private static String text(JsonNode n) {
        return n != null && n.isTextual() ? n.asText() : null;
    }
}
