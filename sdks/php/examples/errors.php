<?php
// php examples/errors.php  (GATEWAY_URL and PRIVACY_RELAY_KEY_FILE set; the engine library found as the README says)
// Every error is a PrivacyRelay\Exception\PrivacyRelayException: a class per kind, a stable errorCode, the HTTP
// status (0 when nothing was answered) and the gateway's request id.
require __DIR__ . '/../autoload.php';

use PrivacyRelay\Client;
use PrivacyRelay\Exception\ConfigurationException;
use PrivacyRelay\Exception\InvalidRequestException;
use PrivacyRelay\Exception\PrivacyRelayException;

try {
    new Client(gatewayUrl: 'http://relay.example', apiKeyFile: getenv('PRIVACY_RELAY_KEY_FILE'));
} catch (ConfigurationException $e) {
    echo "not a gateway URL ({$e->errorCode}): {$e->getMessage()}\n";   // https only, http only to loopback
}

$client = new Client(gatewayUrl: getenv('GATEWAY_URL'), apiKeyFile: getenv('PRIVACY_RELAY_KEY_FILE'));
try {
    // a field the egress policy does not name is refused on this device: nothing is sent
    $client->chat->completions->create(['model' => 'local-chat', 'internal_note' => 'jane.doe@example.com',
        'messages' => [['role' => 'user', 'content' => 'hi']]]);
} catch (InvalidRequestException $e) {
    echo "refused here ({$e->errorCode}) at {$e->body['details']['path']}\n";
}
try {
    $client->chat->completions->create(['model' => 'no-such-model', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
} catch (PrivacyRelayException $e) {
    echo get_class($e), ": HTTP {$e->status} {$e->errorCode}, request {$e->requestId}\n";
}
