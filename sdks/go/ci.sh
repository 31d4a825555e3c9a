#!/usr/bin/env bash
# sdks/go CI: builds the engine's static library (cargo build --release -j1 -p
# privacy-relay-ffi in sdks/rust; a no-op when it is up to date, ~10 min cold on 2 cores), then runs the whole Go
# suite (go test -p 1 -count=1 ./...: the binding and the vectors through the C ABI, the client against stub
# servers, the end to end test against a real gateway and the fake provider, which needs the repository's
# node_modules/.bin/node) and prints "N passed, M failed" (tests and subtests). Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")"
export CGO_ENABLED=1 PR_GO_E2E_REQUIRED="${PR_GO_E2E_REQUIRED:-1}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

echo "== engine library (sdks/rust/build-ffi.sh)"
if ! ../rust/build-ffi.sh; then
  echo "the engine library did not build"
  echo "0 passed, 1 failed"
  exit 1
fi

echo "== go vet ./... && go build ./... (examples included)"
if ! go vet ./... || ! go build ./...; then
  echo "0 passed, 1 failed"
  exit 1
fi

echo "== go test -p 1 -count=1 ./..."
go test -p 1 -count=1 -json ./... > "$log"
status=$?
# Human-readable output, then the totals over every test and subtest.
sed -n 's/.*"Action":"output".*"Output":"\(.*\)"}$/\1/p' "$log" | sed 's/\\n$//; s/\\t/\t/g; s/\\"/"/g' | grep -E '^(---|===|ok|FAIL|PASS|panic|\s+\S+\.go:[0-9]+)' | grep -v '^=== \(RUN\|PAUSE\|CONT\)'
passed=$(grep -c '"Action":"pass","Package":"[^"]*","Test":' "$log")
failed=$(grep -c '"Action":"fail","Package":"[^"]*","Test":' "$log")
skipped=$(grep -c '"Action":"skip","Package":"[^"]*","Test":' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "go test exited $status without a failing test (a build error?)"
  grep -v '"Action"' "$log" | head -40
  failed=1
fi
echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
