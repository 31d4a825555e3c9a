<?php
// WEBHOOK_SECRET=whsec_... php -d ffi.enable=1 -S 127.0.0.1:8090 examples/webhook-receiver.php
// (a web server SAPI needs ffi.enable=1: PHP's default "preload" allows FFI on the command line only)
// A webhook endpoint: the signature is checked on the raw body before anything is trusted (v1 with a 5-minute
// tolerance, v0 fallback, constant time in the engine); a delivery that fails is answered 400 and not acted on.
// Deliveries are at least once: deduplicate on the event id (PrivacyRelay\WebhookDeduper in a long-running worker).
require __DIR__ . '/../autoload.php';

$body = (string) file_get_contents('php://input');
$verdict = PrivacyRelay\Client::verifyWebhook($body, getallheaders(), getenv('WEBHOOK_SECRET'));
if (!$verdict['ok']) {
    http_response_code(400);
    error_log("webhook refused: {$verdict['code']}");
    exit;
}
$event = json_decode($body, true);
error_log("webhook verified: {$event['event']} {$event['event_id']}");
http_response_code(200);
