package dev.privacyrelay.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real gateway (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the fake provider
 * (programs/fake-provider.ts, streaming in 5-character pieces so aliases are cut across SSE frames), started once per
 * test JVM as child processes on ephemeral 127.0.0.1 ports (as sdks/ruby/test/gateway.rb does) and stopped by their
 * own Process handles when the JVM exits. Needs the repository's node_modules/.bin/node (npm ci).
 */
public final class TestGateway {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Path REPO = Path.of(System.getProperty("privacyrelay.repo", "../..")).toAbsolutePath().normalize();
    private static TestGateway shared;

    final String url;
    final String providerUrl;
    final Path dataDir;
    private final List<Process> processes;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final AtomicInteger keys = new AtomicInteger();

    private TestGateway(String url, String providerUrl, Path dataDir, List<Process> processes) {
        this.url = url;
        this.providerUrl = providerUrl;
        this.dataDir = dataDir;
        this.processes = processes;
    }

    static synchronized TestGateway shared() throws Exception {
        if (shared == null) shared = start();
        return shared;
    }

    private static TestGateway start() throws Exception {
        Path node = REPO.resolve("node_modules/.bin/node");
        if (!Files.isExecutable(node)) throw new IllegalStateException(node + " is missing: run npm ci at the repository root");
        Path dataDir = Files.createTempDirectory("pr-java-sdk-");
        List<Process> procs = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> procs.forEach(TestGateway::stop)));
        Process provider = spawn(procs, List.of(node.toString(), "programs/fake-provider.ts", "--host", "127.0.0.1", "--port", "0", "--stream-piece-chars", "5"), Map.of());
        String providerUrl = waitFor(provider, "fake provider listening", 60).get("url").asText();
        Process gateway = spawn(procs, List.of(node.toString(), "programs/gateway.ts"), Map.of(
                "DATA_DIR", dataDir.toString(), "PORT", "0", "HOST", "127.0.0.1", "LOCAL_PROVIDER_URL", providerUrl,
                "PAYMENTS_PROVIDER", "dev", "WEBHOOK_ALLOW_LOOPBACK", "1", "TRUSTED_PROXIES", "127.0.0.1", "LOG_LEVEL", "info"));
        String url = waitFor(gateway, "gateway listening", 180).get("annotations").get("url").asText().replace("0.0.0.0", "127.0.0.1");
        return new TestGateway(url, providerUrl, dataDir, procs);
    }

    private static Process spawn(List<Process> procs, List<String> cmd, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(REPO.toFile()).redirectErrorStream(true);
        pb.environment().remove("DATABASE_URL");
        pb.environment().remove("REDIS_URL");
        pb.environment().putAll(env);
        Process p = pb.start();
        procs.add(p);
        return p;
    }

    /** Reads the process's output until a JSON line containing {@code needle}; the rest is drained in the background. */
    private static JsonNode waitFor(Process p, String needle, int seconds) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String line;
        // readLine blocks; the deadline is checked per line and the process's exit ends the loop.
        while ((line = r.readLine()) != null) {
            seen.append(line).append('\n');
            if (line.contains(needle)) {
                try {
                    JsonNode n = JSON.readTree(line);
                    Thread drain = new Thread(() -> {
                        try {
                            while (r.readLine() != null) {
                                // keep the pipe from filling
                            }
                        } catch (IOException ignored) {
                            // the process ended
                        }
                    });
                    drain.setDaemon(true);
                    drain.start();
                    return n;
                } catch (IOException notJson) {
                    // a line mentioning the needle that is not the log record
                }
            }
            if (System.nanoTime() > deadline) break;
        }
        throw new IllegalStateException("did not log \"" + needle + "\" in " + seconds + " s:\n" + seen);
    }

    private static void stop(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
        } catch (InterruptedException e) {
            p.destroyForcibly();
        }
    }

    JsonNode http(String method, String target, Object body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(target)).header("content-type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        headers.forEach(b::header);
        HttpResponse<String> res = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode out = res.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(res.body());
        if (res.statusCode() >= 300) throw new IllegalStateException(method + " " + target + ": " + res.statusCode() + " " + res.body());
        return out;
    }

    /** What the fake provider received since its last reset: [{method, path, headers, body}]. */
    JsonNode received() throws Exception {
        return http("GET", providerUrl + "/_fake/received", null, Map.of()).get("requests");
    }

    void resetProvider() throws Exception {
        http("POST", providerUrl + "/_fake/reset", Map.of(), Map.of());
    }

    JsonNode admin(String path, Object body) throws Exception {
        String token = Files.readString(dataDir.resolve("admin-token")).strip();
        return http("POST", url + path, body, Map.of("authorization", "Bearer " + token));
    }

    String portalToken(String keyPrefix, List<String> abilities) throws Exception {
        return admin("/api/admin/portal-tokens", Map.of("key_prefix", keyPrefix, "abilities", String.join(",", abilities))).get("token").asText();
    }

    /** A self-service key whose wallet holds $10: [api_key, key_prefix]. Each from its own network (the limit is per network). */
    String[] fundedKey() throws Exception {
        return fundedKey("10");
    }

    /** A self-service key whose wallet holds {@code usd} ("0": left unfunded). */
    String[] fundedKey(String usd) throws Exception {
        int n = keys.incrementAndGet();
        JsonNode key = http("POST", url + "/api/v1/self-service/key", Map.of(), Map.of("x-forwarded-for", "198.19." + (n / 250) + "." + (n % 250)));
        if (!usd.equals("0")) admin("/api/admin/wallets/credit", Map.of("key_prefix", key.get("key_prefix").asText(), "usd", usd));
        return new String[] {key.get("api_key").asText(), key.get("key_prefix").asText()};
    }

    /** A private (0600) key file holding {@code key}. */
    static Path keyFile(String key) throws IOException {
        Path f = Files.createTempDirectory("pr-java-key-").resolve("gateway-key");
        Files.writeString(f, key + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }
}
