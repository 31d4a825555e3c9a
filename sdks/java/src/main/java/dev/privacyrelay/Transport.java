package dev.privacyrelay;

import dev.privacyrelay.errors.ApiErrors;
import dev.privacyrelay.errors.ApiException;
import dev.privacyrelay.errors.ConnectionException;
import dev.privacyrelay.errors.RateLimitException;
import dev.privacyrelay.errors.RelayTimeoutException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;

/**
 * Sends one call to the gateway: the same bytes and headers on every attempt (the Idempotency-Key among them, so a
 * retried write is applied once), retrying 408, 429, 5xx other than 501 and connection failures up to
 * {@code retries} times, waiting what Retry-After asks (else exponential backoff with full jitter, 0.5 s base, 8 s
 * cap). A wait longer than {@code maxRetryAfter} is left to the caller: the error is thrown at once. Each attempt is
 * bounded by {@code timeout} (a stream until its headers arrive). Redirects are never followed: the key goes only to
 * the gateway that passed the identity probe.
 */
final class Transport {
    /** How the transport waits between attempts (tests record the waits instead of sleeping). */
    interface Sleeper {
        void sleep(Duration d) throws InterruptedException;
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int ERROR_BODY_LIMIT = 1 << 20;

    private final HttpClient http;
    private final String base;
    private final int retries;
    private final Duration timeout;
    private final Duration maxRetryAfter;
    private final Sleeper sleeper;

    Transport(HttpClient http, String base, int retries, Duration timeout, Duration maxRetryAfter, Sleeper sleeper) {
        this.http = http;
        this.base = base;
        this.retries = retries;
        this.timeout = timeout;
        this.maxRetryAfter = maxRetryAfter;
        this.sleeper = sleeper;
    }

    String base() {
        return base;
    }

    /** A 2xx answer read whole, or the typed exception. */
    HttpResponse<byte[]> send(String method, String path, Map<String, String> headers, byte[] body) {
        return attempts(method, path, headers, body, HttpResponse.BodyHandlers.ofByteArray(), b -> b);
    }

    /** A 2xx answer whose body the caller reads and closes, or the typed exception. */
    HttpResponse<InputStream> sendStreaming(String method, String path, Map<String, String> headers, byte[] body) {
        return attempts(method, path, headers, body, HttpResponse.BodyHandlers.ofInputStream(), in -> {
            try (in) {
                return in.readNBytes(ERROR_BODY_LIMIT);
            } catch (IOException e) {
                return new byte[0];
            }
        });
    }

    private interface BodyBytes<T> {
        byte[] of(T body);
    }

    private <T> HttpResponse<T> attempts(String method, String path, Map<String, String> headers, byte[] body,
                                         HttpResponse.BodyHandler<T> handler, BodyBytes<T> errorBody) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(rb::header);
        HttpRequest request = rb.build();
        for (int attempt = 0; ; attempt++) {
            RelayException last;
            Duration asked = null;
            try {
                HttpResponse<T> res = http.send(request, handler);
                int status = res.statusCode();
                if (status < 300) return res;
                String retryAfter = res.headers().firstValue("retry-after").orElse(null);
                ApiException e = ApiErrors.fromAnswer(status, res.headers().firstValue("x-request-id").orElse(null), retryAfter, errorBody.of(res.body()),
                        res.headers().firstValue("x-service-receipt-failed").orElse(null));
                if (!retryable(status)) throw e;
                last = e;
                asked = e instanceof RateLimitException ? ((RateLimitException) e).retryAfter().orElse(null) : ApiErrors.retryAfter(retryAfter);
            } catch (HttpTimeoutException e) {
                last = new RelayTimeoutException(method + " " + path + " took longer than " + timeout.toMillis() + " ms.", e);
            } catch (IOException e) {
                last = new ConnectionException(method + " " + path + " to " + base + " failed: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RelayException("canceled", method + " " + path + " was interrupted.", 0, null, null);
            }
            if (attempt >= retries) throw last;
            Duration wait = asked != null ? asked : backoff(attempt);
            if (wait.compareTo(maxRetryAfter) > 0) throw last; // a wait that long is the caller's decision
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw last;
            }
        }
    }

    static boolean retryable(int status) {
        return status == 408 || status == 429 || (status >= 500 && status != 501);
    }

    private static Duration backoff(int attempt) {
        long max = Math.min(8000L, 500L << Math.min(attempt, 5));
        return Duration.ofMillis((long) (RANDOM.nextDouble() * max));
    }
}
