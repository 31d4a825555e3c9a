// Receipts: one chat completion, its receipt-v2 and the gateway's v3 countersignature verified on this machine,
// the receipt proved in the gateway's transparency log, and the log checked to have only grown after a second
// call. Run from sdks/go:
//
//	GATEWAY_URL=http://127.0.0.1:8080 go run ./examples/receipts
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	relay "github.com/privacy-relay/sdk-go"
)

func main() {
	keyFile := os.Getenv("GATEWAY_KEY_FILE")
	if keyFile == "" {
		keyFile = "~/.config/privacy-relay/gateway-key"
	}
	client, err := relay.NewClient(os.Getenv("GATEWAY_URL"), relay.WithAPIKeyFile(keyFile))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ask := func(text string) *relay.ChatCompletion {
		answer, err := client.Chat.Completions.Create(ctx, relay.ChatCompletionParams{Model: "local-chat",
			Messages: []relay.ChatMessage{{Role: "user", Content: text}}})
		if err != nil {
			log.Fatal(err)
		}
		return answer
	}

	answer := ask("Write to jane.doe@example.com")
	meta := answer.Meta
	fmt.Println("receipt verified:", meta.ReceiptVerified != nil && *meta.ReceiptVerified)
	fmt.Println("countersignature verified:", meta.CountersignatureVerified != nil && *meta.CountersignatureVerified)

	// Keep the log's signed tree head; prove the receipt is in the log.
	head, err := client.Receipts.SignedTreeHead(ctx)
	if err != nil {
		log.Fatal(err)
	}
	inclusion, err := client.Receipts.VerifyInclusion(ctx, meta.Receipt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("in the transparency log:", inclusion.Valid)

	// After another call, the log must extend the head we kept (no fork, no rollback).
	ask("Hello again")
	grown, newHead, err := client.Receipts.VerifyConsistency(ctx, head)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log grew from %d to %d leaves consistently: %v\n", head.TreeSize, newHead.TreeSize, grown.Valid)
}
