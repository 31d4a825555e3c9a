#!/usr/bin/env bash
# Makes the PHP package a user installs without Rust or Packagist: src/, autoload.php, composer.json, README.md,
# examples/ and native/ holding the engine library and its header (where the SDK looks first after the explicit
# options), as <outdir>/privacy-relay-php-<version>.tar.gz. The library is PRIVACY_RELAY_LIB when that names a file
# (ci.sh has just built it), else built by sdks/rust/build-ffi.sh (cargo, one job). Prints the archive's path.
# Usage: sdks/php/package.sh [outdir]   (default: sdks/php/dist)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$(mkdir -p "${1:-$here/dist}" && cd "${1:-$here/dist}" && pwd)"
lib="${PRIVACY_RELAY_LIB:-}"
[ -n "$lib" ] && [ -f "$lib" ] || lib="$("$repo/sdks/rust/build-ffi.sh")"
version="$(sed -n "s/.*VERSION = '\(.*\)';/\1/p" "$here/src/Version.php")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
pkg="$stage/privacy-relay-php"
mkdir -p "$pkg/native"
cp -R "$here/src" "$here/examples" "$here/autoload.php" "$here/composer.json" "$here/README.md" "$pkg/"
cp "$lib" "$pkg/native/libprivacy_relay.so"
cp "$repo/sdks/rust/ffi/include/privacy_relay.h" "$pkg/native/"
archive="$out/privacy-relay-php-$version.tar.gz"
tar -C "$stage" -czf "$archive" privacy-relay-php
echo "$archive"
