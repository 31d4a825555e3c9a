<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** What leaves the device for one call (bodyText, headers) and what stays (map: alias => original). */
final class Prepared
{
    /**
     * @param array<string,string> $headers
     * @param array<string,string> $map
     * @param array<string,mixed> $tokenisedBody
     * @param array<string,int> $detectorsFired
     * @param list<array{path:string,kind:string}> $passthrough what mediaPolicy / passthroughPaths let through untokenised, as attested
     */
    public function __construct(
        public readonly string $bodyText,
        public readonly array $headers,
        public readonly array $map,
        public readonly array $tokenisedBody,
        public readonly array $detectorsFired,
        public readonly array $passthrough = [],
    ) {
    }
}
