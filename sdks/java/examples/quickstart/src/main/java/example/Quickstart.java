package example;

import dev.privacyrelay.RelayClient;
import dev.privacyrelay.RelayException;
import dev.privacyrelay.RelayResponse;
import dev.privacyrelay.RelayStream;
import dev.privacyrelay.StreamEvent;
import dev.privacyrelay.errors.RateLimitException;
import java.util.List;
import java.util.Map;

/** The README's quickstart, streaming and error handling, run by sdks/java/ci.sh against a real gateway. */
public class Quickstart {
    public static void main(String[] args) {
        RelayClient client = RelayClient.builder()
                .gatewayUrl(System.getenv("GATEWAY_URL"))                  // e.g. https://gateway.example.com
                .apiKeyFile(System.getenv("PRIVACY_RELAY_KEY_FILE"))       // a file with your svc_ key, chmod 600
                .build();
        var prompt = List.of(Map.of("role", "user", "content", "Write to jane.doe@example.com or call +44 20 7946 0958."));

        // 1. A chat completion: tokenised on this device, answered with the originals restored here.
        RelayResponse answer = client.chat().completions().create(Map.of("model", "local-chat", "messages", prompt));
        System.out.println("answer: " + answer.text());
        System.out.println("what left this device: " + answer.tokenisedRequest());
        System.out.println("receipt verified: " + answer.receiptVerified());

        // 2. Streamed: each event's text is restored as it arrives; the receipt comes as the stream's trailer.
        try (RelayStream stream = client.chat().completions().createStreaming(Map.of("model", "local-chat", "messages", prompt))) {
            System.out.print("streamed: ");
            for (StreamEvent event : stream) System.out.print(event.text());
            System.out.println();
            System.out.println("stream receipt verified: " + stream.receiptVerified());
        }

        // 3. Errors are typed and carry status, code and the gateway's request id.
        try {
            client.chat().completions().create(Map.of("model", "no-such-model", "messages", prompt));
        } catch (RateLimitException e) {
            System.out.println("rate limited; retry after " + e.retryAfter().orElse(null));
        } catch (RelayException e) {
            System.out.println("refused: " + e.status() + " " + e.code() + " (request " + e.requestId() + ")");
        }
    }
}
