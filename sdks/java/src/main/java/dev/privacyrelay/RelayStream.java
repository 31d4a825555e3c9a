package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privacyrelay.engine.StreamingDetokeniser;
import dev.privacyrelay.errors.RelayTimeoutException;
import dev.privacyrelay.errors.StreamException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A streamed answer, read as it arrives: iterate it (once) or take {@link #stream()}. Every text field of the stream
 * has its own streaming detokeniser in the engine, so an alias cut across chunks is held back and shown whole, never
 * half. A malformed frame, an error event, or an end before the route's end marker ({@code [DONE]},
 * {@code message_stop}, a terminal {@code response.*} event) is a {@link StreamException} (or the error event's typed
 * code) thrown from {@code hasNext}. Once the stream ended completely, {@link #receipt()} holds the
 * {@code receipt-v2} trailer and {@link #receiptVerified()} its offline verdict. Close it (try-with-resources) when
 * you stop early; it closes itself at the end.
 */
public final class RelayStream implements Iterator<StreamEvent>, Iterable<StreamEvent>, AutoCloseable {
    private static final Set<String> RESPONSES_TERMINAL = Set.of("response.completed", "response.incomplete", "response.failed");

    private final RelayClient client;
    private final String route;
    private final HttpResponse<InputStream> response;
    private final BufferedReader reader;
    private final Map<String, String> aliases;
    private final Map<String, String> escaped;
    private final String requestId;
    private final String tokenisedRequest;
    private final String attestation;
    private final Map<String, StreamingDetokeniser> fields = new LinkedHashMap<>();
    private final Deque<StreamEvent> queue = new ArrayDeque<>();
    private boolean done;
    private boolean ended;
    private RelayException failure;
    private JsonNode lastId;
    private JsonNode model;
    private JsonNode receipt;
    private Verification verification;
    /** How many synthetic events were inserted in a Responses stream (later sequence numbers move by it). */
    private int shift;
    /** When the read in progress began (System.nanoTime), or 0 between reads: a slow consumer is not an idle stream. */
    private volatile long readingSince;
    private volatile boolean idleExpired;
    private final ScheduledFuture<?> watchdog;
    private final Duration idleTimeout;

    RelayStream(RelayClient client, String route, HttpResponse<InputStream> response, RelayClient.Prepared prepared) {
        this.client = client;
        this.route = route;
        this.response = response;
        this.reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8), 1 << 16);
        this.aliases = prepared.aliases();
        this.escaped = client.jsonEscaped(prepared.aliases());
        this.requestId = response.headers().firstValue("x-request-id").orElse(null);
        this.tokenisedRequest = prepared.bodyText();
        this.attestation = prepared.headers().get("x-service-attestation");
        this.idleTimeout = client.streamIdleTimeout;
        // A stream that stops sending (a stalled upstream or network) must not block hasNext() forever: when nothing
        // arrived for idleTimeout, the body is closed from here, which ends the blocked read with an IOException.
        long checkEvery = Math.max(10, Math.min(1000, idleTimeout.toMillis() / 4));
        this.watchdog = WATCHDOG.scheduleWithFixedDelay(() -> {
            long since = readingSince;
            if (since != 0 && System.nanoTime() - since > idleTimeout.toNanos()) {
                idleExpired = true;
                closeBody();
            }
        }, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
    }

    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "privacy-relay-stream-watchdog");
        t.setDaemon(true);
        return t;
    });

    private void closeBody() {
        try {
            response.body().close();
        } catch (IOException ignored) {
            // the connection is being dropped anyway
        }
    }

    @Override
    public synchronized boolean hasNext() {
        while (queue.isEmpty()) {
            if (failure != null) throw failure;
            if (done) return false;
            try {
                readFrame();
            } catch (RelayException e) {
                failure = e;
                close();
                throw e;
            }
        }
        return true;
    }

    @Override
    public synchronized StreamEvent next() {
        if (!hasNext()) throw new NoSuchElementException("the stream has ended");
        return queue.removeFirst();
    }

    /** This stream itself: it can be iterated once. */
    @Override
    public Iterator<StreamEvent> iterator() {
        return this;
    }

    /** The events as a {@link Stream}; closing it closes this. */
    public Stream<StreamEvent> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED | Spliterator.NONNULL), false).onClose(this::close);
    }

    /** The HTTP status of the stream (200). */
    public int status() {
        return response.statusCode();
    }

    public String requestId() {
        return requestId;
    }

    /** The receipt-v2 trailer, decoded, once the stream ended completely (null before, and for demo keys). */
    public JsonNode receipt() {
        return receipt;
    }

    /** Null without a receipt; else its offline verdict against the gateway's JWKS. */
    public Boolean receiptVerified() {
        if (verification != null) return verification.valid();
        return receipt == null ? null : Boolean.FALSE;
    }

    public Verification receiptVerification() {
        return verification;
    }

    /** Exactly the bytes that left this device, as text. */
    public String tokenisedRequest() {
        return tokenisedRequest;
    }

    public String attestation() {
        return attestation;
    }

    /** Stops reading and releases the connection and the detokenisers; safe to call twice. */
    @Override
    public synchronized void close() {
        done = true;
        watchdog.cancel(false);
        fields.values().forEach(StreamingDetokeniser::close);
        fields.clear();
        closeBody();
    }

    private StreamException streamError(String message) {
        return new StreamException("stream_error", message, response.statusCode(), requestId, null);
    }

    /** Reads one SSE frame (up to a blank line) and queues its events. */
    private void readFrame() {
        String name = null;
        List<String> data = new ArrayList<>();
        boolean seen = false;
        while (true) {
            String line;
            try {
                readingSince = System.nanoTime();
                line = reader.readLine();
                readingSince = 0;
            } catch (IOException e) {
                readingSince = 0;
                if (idleExpired) {
                    throw new RelayTimeoutException("The stream sent nothing for " + idleTimeout.toMillis() + " ms; it was closed and the answer is incomplete.", e);
                }
                throw streamError("The stream broke: " + e.getMessage() + "; the answer is incomplete.");
            }
            if (line == null) {
                if (seen) throw streamError("The stream ended in the middle of a frame; the answer is incomplete.");
                end();
                return;
            }
            if (line.isEmpty()) {
                if (!seen) continue;
                break;
            }
            seen = true;
            if (line.startsWith("event:")) name = line.substring(6).trim();
            else if (line.startsWith("data:")) data.add(line.startsWith("data: ") ? line.substring(6) : line.substring(5));
        }
        if (!data.isEmpty()) handle(name, String.join("\n", data));
    }

    /** The body ended: complete only after the route's end marker; then held-back text is released and the receipt verified. */
    private void end() {
        done = true;
        if (!ended) throw streamError("The stream ended before its end marker (the upstream cut it); the answer is incomplete.");
        if (route.equals("chat.completions")) releaseAllChat();
        if (route.equals("responses")) releaseAllResponses(null);
        if (receipt != null) verification = client.verifyQuietly(receipt, null);
        close();
    }

    private StreamingDetokeniser field(String key) {
        StreamingDetokeniser d = fields.get(key);
        if (d != null) return d;
        // tool arguments and partial_json stream JSON text: originals go in JSON-escaped
        boolean jsonText = key.startsWith("t") || key.startsWith("j") || (key.startsWith("r|") && key.contains("arguments"));
        d = client.engine.streamingDetokeniser(jsonText ? escaped : aliases);
        fields.put(key, d);
        return d;
    }

    private String release(String key) {
        StreamingDetokeniser d = fields.remove(key);
        if (d == null) return "";
        try (d) {
            return d.finish();
        }
    }

    private void emit(String name, JsonNode v, String text) {
        queue.addLast(new StreamEvent(name, v, text));
    }

    private void handle(String name, String text) {
        if ("receipt-v2".equals(name)) {
            try {
                receipt = client.json.readTree(text);
            } catch (IOException e) {
                throw streamError("The receipt-v2 trailer is not JSON.");
            }
            return;
        }
        if (text.equals("[DONE]")) {
            ended = true;
            releaseAllChat();
            return;
        }
        JsonNode parsed;
        try {
            parsed = client.json.readTree(text);
        } catch (IOException e) {
            parsed = null;
        }
        if (parsed == null || !parsed.isObject()) throw streamError("The gateway sent a stream frame that is not a JSON object.");
        ObjectNode v = (ObjectNode) parsed;
        if ("error".equals(name) || "error".equals(v.path("type").asText())) {
            JsonNode inner = v.path("error");
            String code = inner.hasNonNull("code") ? inner.get("code").asText() : inner.hasNonNull("type") ? inner.get("type").asText() : "stream_error";
            throw new StreamException(code, "The stream carried an error: " + inner.path("message").asText(text), response.statusCode(), requestId, inner.isMissingNode() ? null : inner);
        }
        switch (route) {
            case "chat.completions" -> chatFrame(v);
            case "responses" -> responsesFrame(name, v);
            default -> messagesFrame(name, v);
        }
    }

    // ---- chat completions -------------------------------------------------------------------------------------

    private void chatFrame(ObjectNode chunk) {
        if (chunk.has("id")) lastId = chunk.get("id");
        if (chunk.has("model")) model = chunk.get("model");
        StringBuilder added = new StringBuilder();
        for (JsonNode c : chunk.path("choices")) {
            if (!c.isObject()) continue;
            ObjectNode choice = (ObjectNode) c;
            String i = choice.path("index").asText();
            ObjectNode delta = choice.get("delta") instanceof ObjectNode ? (ObjectNode) choice.get("delta") : null;
            if (delta != null) {
                if (delta.path("content").isTextual()) {
                    String out = field("c" + i).push(delta.get("content").asText());
                    delta.put("content", out);
                    added.append(out);
                }
                for (JsonNode call : delta.path("tool_calls")) {
                    JsonNode fn = call.path("function");
                    if (fn instanceof ObjectNode && fn.path("arguments").isTextual()) {
                        ((ObjectNode) fn).put("arguments", field("t" + i + "." + call.path("index").asText()).push(fn.get("arguments").asText()));
                    }
                }
            }
            JsonNode finish = choice.get("finish_reason");
            if (finish != null && !finish.isNull()) {
                for (String key : new ArrayList<>(fields.keySet())) {
                    if (!key.startsWith("t" + i + ".")) continue;
                    String args = release(key);
                    if (args.isEmpty()) continue;
                    if (delta == null) delta = choice.putObject("delta");
                    ArrayNode calls = delta.get("tool_calls") instanceof ArrayNode ? (ArrayNode) delta.get("tool_calls") : delta.putArray("tool_calls");
                    ObjectNode call = calls.addObject();
                    call.put("index", Integer.parseInt(key.substring(key.indexOf('.') + 1)));
                    call.putObject("function").put("arguments", args);
                }
                String rest = release("c" + i);
                if (!rest.isEmpty()) {
                    if (delta == null) delta = choice.putObject("delta");
                    delta.put("content", delta.path("content").asText("") + rest);
                    added.append(rest);
                }
            }
        }
        emit(null, chunk, added.toString());
    }

    private void releaseAllChat() {
        ArrayNode choices = client.json.createArrayNode();
        StringBuilder text = new StringBuilder();
        for (String key : new ArrayList<>(fields.keySet())) {
            if (!key.startsWith("c")) continue;
            String rest = release(key);
            if (rest.isEmpty()) continue;
            ObjectNode choice = choices.addObject();
            choice.put("index", Integer.parseInt(key.substring(1)));
            choice.putObject("delta").put("content", rest);
            choice.putNull("finish_reason");
            text.append(rest);
        }
        if (!choices.isEmpty()) {
            ObjectNode chunk = client.json.createObjectNode();
            chunk.set("id", lastId);
            chunk.put("object", "chat.completion.chunk");
            chunk.set("model", model);
            chunk.set("choices", choices);
            emit(null, chunk, text.toString());
        }
    }

    // ---- Anthropic messages -----------------------------------------------------------------------------------

    private void messagesFrame(String name, ObjectNode v) {
        JsonNode index = v.get("index");
        String idx = index == null ? "null" : index.asText();
        String type = v.path("type").asText();
        if (type.equals("content_block_delta") && v.get("delta") instanceof ObjectNode) {
            ObjectNode delta = (ObjectNode) v.get("delta");
            if ("text_delta".equals(delta.path("type").asText()) && delta.path("text").isTextual()) {
                String out = field("b" + idx).push(delta.get("text").asText());
                delta.put("text", out);
                emit(name, v, out);
                return;
            }
            if ("input_json_delta".equals(delta.path("type").asText()) && delta.path("partial_json").isTextual()) {
                delta.put("partial_json", field("j" + idx).push(delta.get("partial_json").asText()));
            }
        } else if (type.equals("content_block_stop")) {
            String rest = release("b" + idx);
            if (!rest.isEmpty()) {
                ObjectNode ev = client.json.createObjectNode().put("type", "content_block_delta");
                ev.set("index", index);
                ev.putObject("delta").put("type", "text_delta").put("text", rest);
                emit("content_block_delta", ev, rest);
            }
            String partial = release("j" + idx);
            if (!partial.isEmpty()) {
                ObjectNode ev = client.json.createObjectNode().put("type", "content_block_delta");
                ev.set("index", index);
                ev.putObject("delta").put("type", "input_json_delta").put("partial_json", partial);
                emit("content_block_delta", ev, "");
            }
        } else if (type.equals("message_stop")) {
            ended = true;
        }
        // Whole events (message_start, content_block_start with a tool_use input, message_delta ...) carry whole
        // values: every string is restored.
        emit(name, type.equals("content_block_delta") ? v : JsonRestore.restore(client.engine, v, aliases, escaped, null), "");
    }

    // ---- OpenAI Responses ---------------------------------------------------------------------------------------
    // As sdks/go's stream_responses.go: every "*.delta" event's delta has its own detokeniser (keyed by the event type
    // and the item, output, content and summary indexes); held-back text is released as a synthetic delta event just
    // before the field's ".done" event (or before the terminal event), and later sequence numbers shift by one.

    private static String part(JsonNode v, String k) {
        JsonNode n = v.get(k);
        return n == null || n.isNull() ? "" : n.isTextual() ? n.asText() : n.toString();
    }

    private static String responsesKey(String deltaType, JsonNode v) {
        return String.join("|", "r", deltaType, part(v, "item_id"), part(v, "output_index"), part(v, "content_index"), part(v, "summary_index"));
    }

    private ObjectNode renumbered(ObjectNode v) {
        if (v.path("sequence_number").isNumber()) v.put("sequence_number", v.get("sequence_number").asLong() + shift);
        return v;
    }

    private void responsesRelease(String key, JsonNode next) {
        String rest = release(key);
        if (rest.isEmpty()) return;
        String[] p = key.split("\\|", -1);
        ObjectNode ev = client.json.createObjectNode().put("type", p[1]);
        if (next != null && next.isNumber()) {
            ev.put("sequence_number", next.asLong() + shift);
            shift++;
        }
        if (!p[2].isEmpty()) ev.put("item_id", p[2]);
        String[] names = {"output_index", "content_index", "summary_index"};
        for (int i = 0; i < names.length; i++) if (!p[3 + i].isEmpty()) ev.put(names[i], Integer.parseInt(p[3 + i]));
        ev.put("delta", rest);
        emit(p[1], ev, p[1].equals("response.output_text.delta") ? rest : "");
    }

    private void responsesFrame(String name, ObjectNode v) {
        String kind = v.path("type").asText(name == null ? "" : name);
        if (kind.endsWith(".delta") && v.path("delta").isTextual()) {
            String out = field(responsesKey(kind, v)).push(v.get("delta").asText());
            renumbered(v).put("delta", out);
            emit(name, v, kind.equals("response.output_text.delta") ? out : "");
            return;
        }
        if (kind.endsWith(".done")) responsesRelease(responsesKey(kind.substring(0, kind.length() - 5) + ".delta", v), v.get("sequence_number"));
        if (RESPONSES_TERMINAL.contains(kind)) {
            releaseAllResponses(v.get("sequence_number")); // whatever a provider left open without its .done event
            ended = true;
        }
        emit(name, JsonRestore.restore(client.engine, renumbered(v), aliases, escaped, null), "");
    }

    private void releaseAllResponses(JsonNode next) {
        for (String key : new ArrayList<>(fields.keySet())) if (key.startsWith("r|")) responsesRelease(key, next);
    }
}
