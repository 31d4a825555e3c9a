#!/usr/bin/env bash
# sdks/ruby CI: builds the engine library (sdks/rust/build-ffi.sh), runs the whole Minitest suite (binding,
# vectors, client, end to end against a real gateway and the fake provider, the example), then `gem build` with
# the library bundled and a `gem install --local` into a temp GEM_HOME that loads it. Last line "N passed, M failed";
# exits non-zero on any failure. Needs Debian's ruby (3.1+), node_modules at the repository root (npm ci) and cargo.
set -uo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
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

step "minitest (ruby -Ilib -Itest)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
env -u DATABASE_URL -u REDIS_URL PRIVACY_RELAY_LIB="$LIB" \
  ruby -Ilib -Itest -e 'Dir["test/test_*.rb"].sort.each { |f| require_relative f }' 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
line=$(grep -E '^[0-9]+ runs, [0-9]+ assertions, [0-9]+ failures, [0-9]+ errors, [0-9]+ skips' "$log" | tail -1)
if [ -n "$line" ]; then
  read -r runs _ _ _ fails _ errs _ skips _ <<< "${line//,/}"
  passed=$((passed + runs - fails - errs - skips))
  failed=$((failed + fails + errs + skips)) # a skipped test is not a pass
else
  echo "no Minitest summary"; failed=$((failed + 1))
fi
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && { echo "ruby exited $rc"; failed=$((failed + 1)); }

step "gem build (library bundled) and gem install --local"
mkdir -p lib/privacy_relay/native && cp "$LIB" lib/privacy_relay/native/
GEM_TMP=$(mktemp -d)
if gem build privacy_relay.gemspec -o "$GEM_TMP/privacy_relay.gem" >/dev/null \
  && GEM_HOME="$GEM_TMP/home" gem install --local --no-document "$GEM_TMP/privacy_relay.gem" >/dev/null \
  && (cd "$GEM_TMP" && env -u PRIVACY_RELAY_LIB GEM_HOME="$GEM_TMP/home" GEM_PATH="$GEM_TMP/home" \
      ruby -e 'require "privacy_relay"; i = PrivacyRelay::Native.engine_info; abort "not the gem copy: #{PrivacyRelay::Native.path}" unless PrivacyRelay::Native.path.start_with?(ENV["GEM_HOME"]); puts "gem loads #{PrivacyRelay::Native.path} (#{i["id"]} #{i["version"]})"'); then
  passed=$((passed + 1)); echo "gem: ok"
else
  failed=$((failed + 1)); echo "gem: FAILED"
fi
rm -rf "$GEM_TMP"
finish
