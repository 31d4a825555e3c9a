<?php
// PHPUnit bootstrap: the package's plain autoloader, the test helpers, and a temp config dir so the device key
// and alias secret the tests create never land in the user's home.
require dirname(__DIR__) . '/autoload.php';
require __DIR__ . '/TestGateway.php';
require __DIR__ . '/RecordingTransport.php';
require __DIR__ . '/WebhookReceiver.php';
if (getenv('PRIVACY_RELAY_CONFIG_DIR') === false) {
    $dir = sys_get_temp_dir() . '/pr-php-config-' . bin2hex(random_bytes(4));
    mkdir($dir, 0700);
    putenv("PRIVACY_RELAY_CONFIG_DIR=$dir");
}
