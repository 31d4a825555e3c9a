<?php
// php examples/quickstart.php  (GATEWAY_URL and PRIVACY_RELAY_KEY_FILE set; the engine library found as the README says)
require __DIR__ . '/../autoload.php';

$client = new PrivacyRelay\Client(gatewayUrl: getenv('GATEWAY_URL'), apiKeyFile: getenv('PRIVACY_RELAY_KEY_FILE'));
$answer = $client->chat->completions->create([
    'model' => 'local-chat',
    'messages' => [['role' => 'user', 'content' => 'Draft a reply to jane.doe@example.com, phone +44 20 7946 0958.']],
]);
echo $answer['choices'][0]['message']['content'], "\n";
echo 'receipt verified: ', $answer->receiptVerified ? 'yes' : 'no', "\n";
foreach ($client->chat->completions->create(['model' => 'local-chat', 'stream' => true,
    'messages' => [['role' => 'user', 'content' => 'Say hi to jane.doe@example.com']]]) as $chunk) {
    echo $chunk['choices'][0]['delta']['content'] ?? '';
}
echo "\n";
