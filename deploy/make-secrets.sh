#!/bin/sh
# Creates the files compose.yaml mounts as secrets, in deploy/secrets/ (mode 0600, never committed), or in the
# directory given as the first argument. Run once; every gateway node must get the SAME files (docs/deployment.md:
# the KEK and the signing keys are shared). Existing files are kept.
set -eu
umask 077
OUT=${1:-"$(dirname "$0")/secrets"}
mkdir -p "$OUT"
cd "$OUT"
[ -s kek ] || openssl rand -hex 32 > kek
[ -s metrics-token ] || openssl rand -hex 24 > metrics-token
[ -s postgres-password ] || openssl rand -hex 24 > postgres-password
# The licence signing key: a private P-256 JWK.
[ -s licence-signing-key.json ] || node --input-type=module -e '
import { generateKeyPairSync } from "node:crypto"
import { writeFileSync } from "node:fs"
const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
writeFileSync("licence-signing-key.json", JSON.stringify(privateKey.export({ format: "jwk" })) + "\n", { mode: 0o600 })'
# DATABASE_URL carries the database password: an env file for compose, readable by its owner only.
[ -s gateway.env ] || printf 'DATABASE_URL=postgres://privacy_relay:%s@postgres:5432/privacy_relay\n' "$(cat postgres-password)" > gateway.env
echo "secrets in $(pwd)"
