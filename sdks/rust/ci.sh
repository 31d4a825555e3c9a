#!/usr/bin/env bash
# sdks/rust CI: builds the engine and its C ABI (release, one job: CI has 2 cores), runs the whole cargo test
# suite (vectors, tokeniser, request walk, C ABI from Rust), the C test of the ABI (gcc against
# libprivacy_relay.so) and the examples, then prints "N passed, M failed" over all of them. Exits non-zero on
# any failure. Cold: the workspace build took 9 min 20 s with -j1 (engine and C ABI alone 4 min 32 s; the client's
# reqwest/rustls/tokio the rest), plus about a minute of test harnesses; warm: about 1 minute (the end-to-end test
# starts a gateway: ~10 s; the 10 MB prompt test ~10 s).
set -uo pipefail
cd "$(dirname "$0")"
export CARGO_TERM_COLOR=never RUST_BACKTRACE=0
JOBS="${CARGO_BUILD_JOBS:-1}"
passed=0
failed=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

step() { printf '\n== %s\n' "$*"; }

step "cargo build --release -j$JOBS (engine, C ABI library, header)"
start=$(date +%s)
if cargo build --release --workspace -j"$JOBS"; then
  echo "built in $(( $(date +%s) - start )) s"
else
  echo "cargo build failed"
  failed=$((failed + 1))
  echo "$passed passed, $failed failed"
  exit 1
fi

step "cargo test --release (sdks/vectors read from ../vectors, tokeniser, egress policy, bad input, RelayClient end to end)"
start=$(date +%s)
cargo test --release --workspace --no-fail-fast -j"$JOBS" 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}
while read -r p f; do
  passed=$((passed + p))
  failed=$((failed + f))
done < <(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' "$log")
if [ "$test_status" -ne 0 ] && ! grep -q "^test result: FAILED" "$log"; then
  echo "cargo test exited $test_status without a failing test (a build error?)"
  failed=$((failed + 1))
fi
echo "cargo test took $(( $(date +%s) - start )) s"

step "examples (cargo run --release --example quickstart)"
if cargo run --release -q -j"$JOBS" --example quickstart; then
  passed=$((passed + 1))
else
  echo "examples/quickstart.rs failed"
  failed=$((failed + 1))
fi

step "C ABI test (gcc, ffi/tests/abi_test.c against target/release/libprivacy_relay.so)"
if gcc -std=c11 -Wall -Wextra -Werror -O1 -o target/abi_test ffi/tests/abi_test.c -Iffi/include \
  -Ltarget/release -lprivacy_relay -Wl,-rpath,"$PWD/target/release"; then
  ./target/abi_test ../vectors > "$log" 2>&1
  c_status=$?
  cat "$log"
  line=$(sed -n 's/^c-abi: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
  if [ -n "$line" ]; then
    read -r p f <<< "$line"
    passed=$((passed + p))
    failed=$((failed + f))
  fi
  if [ "$c_status" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then failed=$((failed + 1)); fi
else
  echo "the C test did not compile"
  failed=$((failed + 1))
fi

step "C ABI static library links (libprivacy_relay.a)"
if gcc -std=c11 -O1 -o target/abi_test_static ffi/tests/abi_test.c -Iffi/include target/release/libprivacy_relay.a -lpthread -ldl -lm \
  && ./target/abi_test_static ../vectors > /dev/null 2>&1; then
  passed=$((passed + 1))
  echo "static link: ok"
else
  failed=$((failed + 1))
  echo "static link: FAILED"
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
