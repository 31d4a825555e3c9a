#!/usr/bin/env bash
# sdks/java CI (DESIGN.md section 10): builds the engine library (sdks/rust/build-ffi.sh), runs the whole JUnit 5 suite
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

echo "== mvn package: the jar bundles the engine library"
if mvn -B -q -T1 -DskipTests -Dengine.lib.dir="$(dirname "$LIB")" package &&
  jar tf target/privacy-relay-0.1.0.jar | grep -qx "linux-x86-64/libprivacy_relay.so"; then
  echo "ok: target/privacy-relay-0.1.0.jar carries linux-x86-64/libprivacy_relay.so"
  passed=$((passed + 1))
else
  echo "FAILED: the jar does not carry the engine library"
  failed=$((failed + 1))
fi
finish
