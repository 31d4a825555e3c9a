#!/usr/bin/env bash
# sdks/java CI: builds the engine library (sdks/rust/build-ffi.sh), runs the whole JUnit 5 suite
# with Maven (`mvn test`: the binding, every vector file through the C ABI, the client against a stand-in gateway, bad
# input, and end to end against a real gateway process and the fake provider started by the tests), then packages the
# jar and checks that it carries the library (linux-x86-64/libprivacy_relay.so) where JNA finds it. Last line
# "N passed, M failed", counted from Surefire's reports (a skipped test is not a pass); exits non-zero on any failure.
# Needs a JDK 17+, Maven, cargo and the repository's node_modules (npm ci); dependencies come from Maven Central.
set -uo pipefail
cd "$(dirname "$0")"
passed=0
failed=0
finish() { echo; echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

echo "== engine library (sdks/rust/build-ffi.sh)"
LIB=$(../rust/build-ffi.sh) || { echo "cargo build failed"; failed=$((failed + 1)); finish; }
echo "using $LIB"

REPO=$(cd ../.. && pwd)
if [ ! -x "$REPO/node_modules/.bin/node" ]; then
  echo "== npm ci (the end-to-end tests start programs/gateway.ts and programs/fake-provider.ts)"
  (cd "$REPO" && npm ci --no-audit --no-fund) || { echo "npm ci failed"; failed=$((failed + 1)); }
fi

echo "== mvn test"
rm -rf target/surefire-reports
env -u DATABASE_URL -u REDIS_URL mvn -B -q -T1 -Dengine.lib.dir="$(dirname "$LIB")" test
rc=$?
counts=$(python3 - <<'PY'
import glob, xml.etree.ElementTree as ET
tests = bad = 0
for f in glob.glob("target/surefire-reports/TEST-*.xml"):
    s = ET.parse(f).getroot()
    tests += int(s.get("tests", 0))
    bad += int(s.get("failures", 0)) + int(s.get("errors", 0)) + int(s.get("skipped", 0))
print(tests, bad)
PY
)
read -r tests bad <<< "$counts"
passed=$((passed + tests - bad))
failed=$((failed + bad))
[ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && { echo "mvn test exited $rc without a failing test (a build error?)"; failed=$((failed + 1)); }
[ "$tests" -eq 0 ] && { echo "no Surefire report"; failed=$((failed + 1)); }

echo "== mvn install: the jar bundles the engine library and goes to the local Maven repository"
if mvn -B -q -T1 -DskipTests -Dengine.lib.dir="$(dirname "$LIB")" install &&
  jar tf target/privacy-relay-0.1.0.jar | grep -qx "linux-x86-64/libprivacy_relay.so"; then
  echo "ok: target/privacy-relay-0.1.0.jar carries linux-x86-64/libprivacy_relay.so, installed as dev.privacyrelay:privacy-relay:0.1.0"
  passed=$((passed + 1))
else
  echo "FAILED: the jar was not built, does not carry the engine library, or was not installed"
  failed=$((failed + 1))
  finish
fi

echo "== examples/quickstart and the README quickstart: Maven projects depending on the installed jar, against a real gateway"
# The gateway and the fake provider are started here (127.0.0.1, ephemeral ports, embedded storage in a temp
# DATA_DIR) and stopped by the PIDs this script got; the example runs exactly as the README says.
NODE="$REPO/node_modules/.bin/node"
WORK=$(mktemp -d)
pids=()
stop_servers() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done; rm -rf "$WORK"; }
trap stop_servers EXIT
# wait_for FILE NEEDLE SECONDS: prints the first log line holding NEEDLE, or fails after SECONDS.
wait_for() { local i; for ((i = 0; i < $3 * 5; i++)); do grep -m1 -F "$2" "$1" && return 0; sleep 0.2; done; return 1; }
json_get() { python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); [v := v[k] for k in sys.argv[1:]]; print(v)' "$@"; }
example_ok=0
readme_ok=0
(cd "$REPO" && exec env -u DATABASE_URL -u REDIS_URL "$NODE" programs/fake-provider.ts --host 127.0.0.1 --port 0 > "$WORK/provider.log" 2>&1) &
pids+=($!)
if line=$(wait_for "$WORK/provider.log" "fake provider listening" 60); then
  provider=$(echo "$line" | json_get url)
  (cd "$REPO" && exec env -u DATABASE_URL -u REDIS_URL DATA_DIR="$WORK/data" PORT=0 HOST=127.0.0.1 LOCAL_PROVIDER_URL="$provider" \
    PAYMENTS_PROVIDER=dev LOG_LEVEL=info "$NODE" programs/gateway.ts > "$WORK/gateway.log" 2>&1) &
  pids+=($!)
fi
if [ -n "${provider:-}" ] && line=$(wait_for "$WORK/gateway.log" "gateway listening" 180); then
  gateway=$(echo "$line" | json_get annotations url | sed 's/0\.0\.0\.0/127.0.0.1/')
  key=$(curl -sf -X POST -H 'content-type: application/json' -d '{}' "$gateway/api/v1/self-service/key")
  api_key=$(echo "$key" | json_get api_key)
  curl -sf -X POST -H 'content-type: application/json' -H "authorization: Bearer $(cat "$WORK/data/admin-token")" \
    -d "{\"key_prefix\":\"$(echo "$key" | json_get key_prefix)\",\"usd\":\"5\"}" "$gateway/api/admin/wallets/credit" > /dev/null
  (umask 077 && printf '%s\n' "$api_key" > "$WORK/gateway-key")
  out=$(cd examples/quickstart && GATEWAY_URL="$gateway" PRIVACY_RELAY_KEY_FILE="$WORK/gateway-key" PRIVACY_RELAY_CONFIG_DIR="$WORK/device" \
    mvn -B -q -Dstyle.color=never compile exec:java 2>&1 | sed "s/\x1b\[[0-9;]*m//g")
  echo "$out"
  if grep -q "^answer: .*jane.doe@example.com" <<< "$out" && grep -q "^receipt verified: true" <<< "$out" &&
    grep -q "^streamed: .*+44 20 7946 0958" <<< "$out" && grep -q "^stream receipt verified: true" <<< "$out" &&
    grep -q "^refused: 404 model_not_found (request " <<< "$out" && ! grep -q "^what left this device: .*jane.doe@example.com" <<< "$out"; then
    example_ok=1
  fi
  # The README's quickstart block, pasted as written into src/main/java/Main.java of a project with the dependency.
  mkdir -p "$WORK/readme/src/main/java"
  sed 's#<mainClass>example.Quickstart</mainClass>#<mainClass>Main</mainClass>#' examples/quickstart/pom.xml > "$WORK/readme/pom.xml"
  sed -n '/^<!-- quickstart -->$/,/^<!-- \/quickstart -->$/p' README.md | grep -v '^<!--' | grep -v '^```' > "$WORK/readme/src/main/java/Main.java"
  out=$(cd "$WORK/readme" && GATEWAY_URL="$gateway" PRIVACY_RELAY_KEY_FILE="$WORK/gateway-key" PRIVACY_RELAY_CONFIG_DIR="$WORK/device" \
    mvn -B -q -Dstyle.color=never compile exec:java 2>&1 | sed "s/\x1b\[[0-9;]*m//g")
  echo "$out"
  if grep -q "^Echo: Write to jane.doe@example.com" <<< "$out" && grep -q "^receipt verified: true" <<< "$out" &&
    grep -q "^what left this device: .*<EMAIL_1_" <<< "$out" && ! grep -q "^what left this device: .*jane.doe@example.com" <<< "$out"; then
    readme_ok=1
  fi
else
  echo "the gateway did not start:"; cat "$WORK/provider.log" "$WORK/gateway.log" 2>/dev/null | tail -20
fi
if [ "$example_ok" -eq 1 ]; then echo "ok: examples/quickstart"; passed=$((passed + 1)); else echo "FAILED: examples/quickstart"; failed=$((failed + 1)); fi
if [ "$readme_ok" -eq 1 ]; then echo "ok: the README quickstart as pasted"; passed=$((passed + 1)); else echo "FAILED: the README quickstart"; failed=$((failed + 1)); fi
finish
