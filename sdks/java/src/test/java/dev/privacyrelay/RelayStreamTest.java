package dev.privacyrelay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.privacyrelay.errors.AuthenticationException;
import dev.privacyrelay.errors.StreamException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Streams against a stand-in gateway that cuts every text into 4-character pieces, so aliases straddle frames. */
class RelayStreamTest {
    static final String EMAIL = RelayClientTest.EMAIL;
    StubGateway gateway;
    RelayClient client;

    @BeforeEach
    void start() throws Exception {
        gateway = new StubGateway();
        client = RelayClient.builder().gatewayUrl(gateway.url()).apiKey(RelayClientTest.KEY).nameModel("off").retries(0)
                .configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
    }

    @AfterEach
    void stop() {
        gateway.close();
    }

    static List<String> pieces(String text) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < text.length(); i += 4) out.add(text.substring(i, Math.min(text.length(), i + 4)));
        return out;
    }

    static String chunk(String content) {
        ObjectNode c = StubGateway.JSON.createObjectNode().put("id", "chatcmpl-1").put("object", "chat.completion.chunk").put("model", "m");
        c.putArray("choices").addObject().put("index", 0).putNull("finish_reason").putObject("delta").put("content", content);
        return "data: " + c + "\n\n";
    }

    /** Streams the echoed prompt; {@code end} is what follows the pieces ("" cuts the stream there). */
    void echoStream(String end, boolean cutInsideAlias) {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            String text = "Echo: " + StubGateway.firstContent(body);
            OutputStream out = StubGateway.sse(ex);
            if (cutInsideAlias) text = text.substring(0, text.indexOf("<EMAIL_") + 8);
            for (String p : pieces(text)) StubGateway.frame(out, chunk(p));
            StubGateway.frame(out, end);
            out.close();
        });
    }

    static Map<String, Object> chat(String text) {
        return RelayClientTest.chat(text);
    }

    @Test
    void aliasesCutAcrossChunksAreRestoredWholeAsTheyArrive() {
        echoStream("data: [DONE]\n\n", false);
        List<StreamEvent> events;
        try (RelayStream s = client.chat().completions().createStreaming(chat("Mail " + EMAIL + " now"))) {
            events = s.stream().collect(Collectors.toList());
            assertEquals(200, s.status());
            assertEquals("req_stub_stream", s.requestId());
        }
        String text = events.stream().map(StreamEvent::text).collect(Collectors.joining());
        assertEquals("Echo: Mail " + EMAIL + " now", text);
        assertTrue(events.stream().noneMatch(e -> e.text().contains("<EMAIL") || e.text().contains("EMAIL_")), "never half an alias");
        String sent = gateway.calls().get(0).body();
        assertFalse(sent.contains(EMAIL));
        assertTrue(sent.contains("\"stream\":true"));
        assertEquals("text/event-stream", gateway.calls().get(0).header("accept"));
    }

    @Test
    void aStreamCutInsideAnAliasIsAStreamErrorAndTheHalfAliasIsNeverShown() {
        echoStream("", true);
        RelayStream s = client.chat().completions().createStreaming(chat("Mail " + EMAIL + " now"));
        StringBuilder shown = new StringBuilder();
        StreamException e = assertThrows(StreamException.class, () -> s.forEachRemaining(ev -> shown.append(ev.text())));
        assertEquals("stream_error", e.code());
        assertEquals("req_stub_stream", e.requestId());
        assertTrue(e.getMessage().contains("end marker"), e.getMessage());
        assertEquals("Echo: Mail ", shown.toString());
        assertThrows(StreamException.class, s::hasNext, "the failure stays");
    }

    @Test
    void aFrameThatIsNotJsonIsAStreamError() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, chunk("Hello"));
            StubGateway.frame(out, "data: {not json\n\n");
            out.close();
        });
        RelayStream s = client.chat().completions().createStreaming(chat("hi"));
        assertEquals("Hello", s.next().text());
        StreamException e = assertThrows(StreamException.class, s::next);
        assertTrue(e.getMessage().contains("not a JSON object"));
    }

    @Test
    void aFrameCutInTheMiddleIsAStreamError() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, "data: {\"choices\":[]}\n");
            out.close();
        });
        RelayStream s = client.chat().completions().createStreaming(chat("hi"));
        assertThrows(StreamException.class, s::hasNext);
    }

    @Test
    void anErrorEventInTheStreamIsThrownWithItsCode() {
        gateway.on("/api/v1/messages", (ex, body) -> {
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n");
            out.close();
        });
        RelayStream s = client.messages().createStreaming(Map.of("model", "m", "max_tokens", 10, "messages", List.of(Map.of("role", "user", "content", "hi"))));
        StreamException e = assertThrows(StreamException.class, s::hasNext);
        assertEquals("overloaded_error", e.code());
    }

    @Test
    void anErrorStatusBeforeTheStreamIsTheTypedException() {
        gateway.on("/api/v1/chat/completions", (ex, body) -> StubGateway.answer(ex, 401, "{\"error\":{\"code\":\"invalid_key\",\"message\":\"no\"}}"));
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> client.chat().completions().createStreaming(chat("hi")));
        assertEquals(401, e.status());
    }

    @Test
    void anAnthropicStreamRestoresTextDeltasAndEndsAtMessageStop() {
        gateway.on("/api/v1/messages", (ex, body) -> {
            String text = "Echo: " + StubGateway.firstContent(body);
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n");
            StubGateway.frame(out, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
            for (String p : pieces(text)) {
                ObjectNode d = StubGateway.JSON.createObjectNode().put("type", "content_block_delta").put("index", 0);
                d.putObject("delta").put("type", "text_delta").put("text", p);
                StubGateway.frame(out, "event: content_block_delta\ndata: " + d + "\n\n");
            }
            StubGateway.frame(out, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
            StubGateway.frame(out, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
            out.close();
        });
        try (RelayStream s = client.messages().createStreaming(Map.of("model", "m", "max_tokens", 10, "messages", List.of(Map.of("role", "user", "content", "Call " + EMAIL))))) {
            List<StreamEvent> events = s.stream().toList();
            assertEquals("Echo: Call " + EMAIL, events.stream().map(StreamEvent::text).collect(Collectors.joining()));
            assertEquals("message_stop", events.get(events.size() - 1).event());
        }
    }

    @Test
    void aResponsesStreamReleasesHeldTextBeforeTheDoneEventAndRenumbers() {
        gateway.on("/api/v1/responses", (ex, body) -> {
            String input = StubGateway.JSON.readTree(body).get("input").asText();
            String text = "Echo: " + input.substring(0, input.indexOf('>') + 1); // ends with the alias: held until .done
            OutputStream out = StubGateway.sse(ex);
            int seq = 0;
            for (String p : pieces(text)) {
                ObjectNode d = StubGateway.JSON.createObjectNode().put("type", "response.output_text.delta").put("sequence_number", seq++)
                        .put("item_id", "msg_1").put("output_index", 0).put("content_index", 0).put("delta", p);
                StubGateway.frame(out, "event: response.output_text.delta\ndata: " + d + "\n\n");
            }
            ObjectNode done = StubGateway.JSON.createObjectNode().put("type", "response.output_text.done").put("sequence_number", seq++)
                    .put("item_id", "msg_1").put("output_index", 0).put("content_index", 0).put("text", text);
            StubGateway.frame(out, "event: response.output_text.done\ndata: " + done + "\n\n");
            StubGateway.frame(out, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":" + seq + ",\"response\":{\"id\":\"resp_1\"}}\n\n");
            out.close();
        });
        try (RelayStream s = client.responses().createStreaming(Map.of("model", "m", "input", "Mail " + EMAIL + " please"))) {
            List<StreamEvent> events = s.stream().toList();
            assertEquals("Echo: Mail " + EMAIL, events.stream().map(StreamEvent::text).collect(Collectors.joining()));
            StreamEvent done = events.stream().filter(e -> "response.output_text.done".equals(e.event())).findFirst().orElseThrow();
            assertEquals("Echo: Mail " + EMAIL, done.data().get("text").asText(), "whole values restored");
            List<Long> seqs = events.stream().map(e -> e.data().path("sequence_number").asLong()).toList();
            for (int i = 1; i < seqs.size(); i++) assertEquals(seqs.get(i - 1) + 1, seqs.get(i), "numbers stay consecutive: " + seqs);
        }
    }

    @Test
    void streamedToolCallArgumentsAndPartialJsonAreRestoredAcrossFramesAndStillParse() throws Exception {
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            String content = StubGateway.firstContent(body);
            String alias = content.substring(content.indexOf('<'), content.indexOf('>') + 1);
            OutputStream out = StubGateway.sse(ex);
            for (String p : pieces("{\"to\":\"" + alias + "\"}")) {
                ObjectNode c = StubGateway.JSON.createObjectNode().put("id", "chatcmpl-2").put("object", "chat.completion.chunk");
                ObjectNode choice = c.putArray("choices").addObject().put("index", 0);
                choice.putNull("finish_reason");
                choice.putObject("delta").putArray("tool_calls").addObject().put("index", 0).putObject("function").put("arguments", p);
                StubGateway.frame(out, "data: " + c + "\n\n");
            }
            StubGateway.frame(out, "data: {\"id\":\"chatcmpl-2\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
            StubGateway.frame(out, "data: [DONE]\n\n");
            out.close();
        });
        StringBuilder args = new StringBuilder();
        try (RelayStream s = client.chat().completions().createStreaming(chat("Mail " + EMAIL))) {
            s.forEachRemaining(e -> e.data().path("choices").forEach(c -> c.path("delta").path("tool_calls")
                    .forEach(t -> args.append(t.path("function").path("arguments").asText()))));
        }
        assertEquals(EMAIL, StubGateway.JSON.readTree(args.toString()).get("to").asText(), args.toString());

        gateway.on("/api/v1/messages", (ex, body) -> {
            String content = StubGateway.firstContent(body);
            String alias = content.substring(content.indexOf('<'), content.indexOf('>') + 1);
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"content\":[{\"type\":\"text\",\"text\":\"re " + alias + "\"}]}}\n\n");
            for (String p : pieces("{\"to\":\"" + alias + "\"}")) {
                ObjectNode d = StubGateway.JSON.createObjectNode().put("type", "content_block_delta").put("index", 1);
                d.putObject("delta").put("type", "input_json_delta").put("partial_json", p);
                StubGateway.frame(out, "event: content_block_delta\ndata: " + d + "\n\n");
            }
            StubGateway.frame(out, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n");
            StubGateway.frame(out, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
            out.close();
        });
        StringBuilder partial = new StringBuilder();
        String started;
        try (RelayStream s = client.messages().createStreaming(Map.of("model", "m", "max_tokens", 10, "messages", List.of(Map.of("role", "user", "content", "Mail " + EMAIL))))) {
            List<StreamEvent> events = s.stream().toList();
            events.forEach(e -> partial.append(e.data().path("delta").path("partial_json").asText("")));
            started = events.get(0).data().at("/message/content/0/text").asText();
        }
        assertEquals(EMAIL, StubGateway.JSON.readTree(partial.toString()).get("to").asText(), partial.toString());
        assertEquals("re " + EMAIL, started, "whole events restored");
    }

    @Test
    void aStreamThatStallsIsClosedAfterTheIdleTimeoutNotAHang() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        gateway.on("/api/v1/chat/completions", (ex, body) -> {
            OutputStream out = StubGateway.sse(ex);
            StubGateway.frame(out, chunk("Hello"));
            try {
                release.await(30, java.util.concurrent.TimeUnit.SECONDS); // then nothing more: a stalled upstream
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        RelayClient stalling = RelayClient.builder().gatewayUrl(gateway.url()).apiKey(RelayClientTest.KEY).nameModel("off").retries(0)
                .streamIdleTimeout(java.time.Duration.ofMillis(400)).configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        try {
            RelayStream s = stalling.chat().completions().createStreaming(chat("hi"));
            assertEquals("Hello", s.next().text());
            dev.privacyrelay.errors.RelayTimeoutException e = assertThrows(dev.privacyrelay.errors.RelayTimeoutException.class, s::hasNext);
            assertEquals("timeout", e.code());
            assertTrue(e.getMessage().contains("400 ms"), e.getMessage());
        } finally {
            release.countDown();
        }
    }

    @Test
    void aSlowConsumerIsNotAnIdleStream() throws Exception {
        echoStream("data: [DONE]\n\n", false);
        RelayClient idle = RelayClient.builder().gatewayUrl(gateway.url()).apiKey(RelayClientTest.KEY).nameModel("off").retries(0)
                .streamIdleTimeout(java.time.Duration.ofMillis(200)).configDir(Files.createTempDirectory("pr-java-device-").toString()).build();
        try (RelayStream s = idle.chat().completions().createStreaming(chat("Mail " + EMAIL))) {
            StringBuilder text = new StringBuilder(s.next().text());
            Thread.sleep(800); // the consumer is busy; the stream is not idle
            s.forEachRemaining(e -> text.append(e.text()));
            assertEquals("Echo: Mail " + EMAIL, text.toString());
        }
    }
}
