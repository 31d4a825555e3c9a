#!/usr/bin/env bash
# Builds the engine's C library (crate privacy-relay-ffi: libprivacy_relay.so and .a) in release mode and prints
# the shared library's path on its last line. Every binding's ci.sh (Go, PHP, Ruby, Java) calls this one script, so
# how the library is built is written once. cargo decides what is stale (sources, data files, Cargo.lock): a no-op
# takes about a second; a cold build about 5 minutes with one job on 2 cores. CARGO_BUILD_JOBS overrides the jobs.
# Build output goes to stderr, so `lib=$(sdks/rust/build-ffi.sh)` captures only the path.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
(cd "$here" && cargo build --release -j"${CARGO_BUILD_JOBS:-1}" -p privacy-relay-ffi) >&2
echo "${CARGO_TARGET_DIR:-$here/target}/release/libprivacy_relay.so"
