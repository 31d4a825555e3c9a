<?php
// php examples/streaming.php  (GATEWAY_URL and PRIVACY_RELAY_KEY_FILE set; the engine library found as the README says)
// An Anthropic Messages stream: each event arrives with the originals restored on this device, an alias cut across
// frames included; after the loop the receipt-v2 trailer is verified against the gateway's keys.
require __DIR__ . '/../autoload.php';

$client = new PrivacyRelay\Client(gatewayUrl: getenv('GATEWAY_URL'), apiKeyFile: getenv('PRIVACY_RELAY_KEY_FILE'));
$stream = $client->messages->create([
    'model' => 'local-chat',
    'max_tokens' => 200,
    'stream' => true,
    'messages' => [['role' => 'user', 'content' => 'Confirm the booking for jane.doe@example.com.']],
]);
foreach ($stream as $event) {
    if ($event['type'] === 'content_block_delta') {
        echo $event['delta']['text'] ?? '';
    }
}
echo "\nreceipt ", $stream->receipt['jti'], ' verified: ', $stream->receiptVerified ? 'yes' : 'no', "\n";
