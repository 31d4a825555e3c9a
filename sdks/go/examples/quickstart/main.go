// Quickstart: one chat completion and one stream through your gateway. The e-mail address never leaves this
// machine; the answer comes back with it restored. Run from sdks/go:
//
//	GATEWAY_URL=http://127.0.0.1:8080 go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	relay "github.com/privacy-relay/sdk-go"
)

func main() {
	gateway := os.Getenv("GATEWAY_URL")
	keyFile := os.Getenv("GATEWAY_KEY_FILE")
	if keyFile == "" {
		keyFile = "~/.config/privacy-relay/gateway-key"
	}
	client, err := relay.NewClient(gateway, relay.WithAPIKeyFile(keyFile))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	params := relay.ChatCompletionParams{Model: "local-chat", Messages: []relay.ChatMessage{{Role: "user", Content: "Write to jane.doe@example.com"}}}

	answer, err := client.Chat.Completions.Create(ctx, params)
	var re *relay.Error
	if errors.As(err, &re) {
		log.Fatalf("%s (HTTP %d, request %s): %s", re.Code, re.Status, re.RequestID, re.Message)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Text())
	fmt.Println("sent:", string(answer.Meta.TokenisedRequest))
	fmt.Println("receipt verified:", answer.Meta.ReceiptVerified != nil && *answer.Meta.ReceiptVerified)

	stream, err := client.Chat.Completions.NewStreaming(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	for stream.Next() {
		fmt.Print(stream.Current().Text)
	}
	if err := stream.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
}
