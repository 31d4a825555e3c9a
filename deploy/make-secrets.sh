#!/bin/sh
# Creates the files compose.yaml mounts as secrets, in deploy/secrets/ (mode 0600, never committed). Run once;
# every gateway node must get the SAME files (docs/deployment.md: the KEK and the signing keys are shared).
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets
[ -s secrets/kek ] || openssl rand -hex 32 > secrets/kek
[ -s secrets/metrics-token ] || openssl rand -hex 24 > secrets/metrics-token
[ -s secrets/postgres-password ] || openssl rand -hex 24 > secrets/postgres-password
# The licence signing key: a private P-256 JWK.
[ -s secrets/licence-signing-key.json ] || node --input-type=module -e '
import { generateKeyPairSync } from "node:crypto"
import { writeFileSync } from "node:fs"
const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
writeFileSync("secrets/licence-signing-key.json", JSON.stringify(privateKey.export({ format: "jwk" })) + "\n", { mode: 0o600 })'
# DATABASE_URL carries the database password: an env file for compose, readable by its owner only.
[ -s secrets/gateway.env ] || printf 'DATABASE_URL=postgres://privacy_relay:%s@postgres:5432/privacy_relay\n' "$(cat secrets/postgres-password)" > secrets/gateway.env
echo "secrets in $(pwd)/secrets"
