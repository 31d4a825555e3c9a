<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** @internal What every REST section shares: the client's call and query-string building. */
abstract class RestSection
{
    public function __construct(protected Client $client)
    {
    }

    /** @param array<string,mixed>|null $params "?a=1&b=2" without the null ones, "" when none is left */
    protected static function query(?array $params): string
    {
        $q = http_build_query(array_filter($params ?? [], static fn ($v) => $v !== null));
        return $q === '' ? '' : "?$q";
    }

    protected static function id(string|int $id): string
    {
        return rawurlencode((string) $id);
    }
}
