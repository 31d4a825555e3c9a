#!/usr/bin/env bash
# sdks/php CI: builds the engine library (sdks/rust/build-ffi.sh; cargo, one job), then runs the whole
# PHPUnit suite with Debian's phpunit (binding, vectors, client, end to end against a real gateway and the fake
# provider, the README quickstart as written and every program in examples/). Last line "N passed, M failed"; exits non-zero on any failure.
# Needs Debian's php-cli (8.2+, FFI built in) and phpunit, node_modules at the repository root (npm ci) and cargo.
set -uo pipefail
cd "$(dirname "$0")"
REPO=$(cd ../.. && pwd)
passed=0
failed=0
step() { printf '\n== %s\n' "$*"; }
finish() { echo; echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

step "engine library (sdks/rust/build-ffi.sh)"
LIB=$("$REPO/sdks/rust/build-ffi.sh") || { echo "cargo build failed"; failed=$((failed + 1)); finish; }
echo "using $LIB"

if [ ! -x "$REPO/node_modules/.bin/node" ]; then
  step "npm ci (the end-to-end tests start programs/gateway.ts)"
  (cd "$REPO" && npm ci --no-audit --no-fund) || { echo "npm ci failed"; failed=$((failed + 1)); }
fi

step "phpunit"
command -v phpunit >/dev/null || { echo "phpunit is missing (apt-get install -y phpunit)"; failed=$((failed + 1)); finish; }
log=$(mktemp)
junit=$(mktemp)
trap 'rm -f "$log" "$junit"' EXIT
env -u DATABASE_URL -u REDIS_URL PRIVACY_RELAY_LIB="$LIB" phpunit --log-junit "$junit" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# Counts from the JUnit report's top suite: tests, failures, errors, skipped (a skipped test is not a pass).
counts=$(php -r '$x = @simplexml_load_file($argv[1]); if (!$x || !isset($x->testsuite[0])) exit(1); $s = $x->testsuite[0];
  echo (int) $s["tests"], " ", (int) $s["failures"] + (int) $s["errors"] + (int) $s["skipped"] + (int) $s["warnings"];' "$junit")
if [ -n "$counts" ]; then
  read -r tests bad <<< "$counts"
  passed=$((passed + tests - bad))
  failed=$((failed + bad))
else
  echo "no PHPUnit report"; failed=$((failed + 1))
fi
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && { echo "phpunit exited $rc"; failed=$((failed + 1)); }
finish
