package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in gateway on 127.0.0.1 for the client's own behaviour (retries, errors, streams, refusals): it answers the
 * identity probe with the receipts vector's JWKS unless told otherwise, records every request, and answers each path
 * with the handler a test gives it.
 */
final class StubGateway implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    record Seen(String method, String path, Map<String, List<String>> headers, String body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
            return null;
        }
    }

    interface Handler {
        void handle(HttpExchange ex, String body) throws IOException;
    }

    final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final Map<String, Handler> routes = new ConcurrentHashMap<>();
    private final HttpServer server;

    StubGateway() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String path = ex.getRequestURI().getPath();
            seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().toString(), ex.getRequestHeaders(), body));
            try {
                Handler h = routes.get(path);
                if (h == null && path.equals(GatewayIdentity.PROBE_PATH)) h = (e, b) -> answer(e, 200, jwks().toString());
                if (h == null) h = (e, b) -> answer(e, 404, "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\"}}");
                h.handle(ex, body);
            } finally {
                ex.close();
            }
        });
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.start();
    }

    static JsonNode jwks() {
        try {
            return JSON.readTree(Path.of(System.getProperty("privacyrelay.vectors", "../vectors"), "receipts.json").toFile()).get("jwks");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    StubGateway on(String path, Handler h) {
        routes.put(path, h);
        return this;
    }

    /** The requests other than the identity probe. */
    List<Seen> calls() {
        return seen.stream().filter(s -> !s.path().equals(GatewayIdentity.PROBE_PATH)).toList();
    }

    static void answer(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        if (!ex.getResponseHeaders().containsKey("content-type")) ex.getResponseHeaders().add("content-type", "application/json");
        ex.getResponseHeaders().add("x-request-id", "req_stub_" + status);
        ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
        if (b.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        }
    }

    /** Starts an SSE answer; write frames with {@link #frame}. */
    static OutputStream sse(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().add("content-type", "text/event-stream");
        ex.getResponseHeaders().add("x-request-id", "req_stub_stream");
        ex.sendResponseHeaders(200, 0);
        return ex.getResponseBody();
    }

    static void frame(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** The content of the first user message of a chat body (what the provider would echo). */
    static String firstContent(String body) throws IOException {
        return JSON.readTree(body).path("messages").path(0).path("content").asText();
    }

    /** A private key file holding {@code key}, in a fresh temp folder. */
    static Path keyFile(String key, String mode) throws IOException {
        Path dir = Files.createTempDirectory("pr-java-key-");
        Path f = dir.resolve("gateway-key");
        Files.writeString(f, key + "\n");
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
        return f;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
