#!/usr/bin/env bash
# The unit tests of every module that opts out of `#![deny(unsafe_code)]`, under Miri (undefined
# behaviour, out-of-bounds and uninitialised reads, aliasing under Stacked Borrows, leaks).
# Modules whose unsafe code is a system call or a foreign function Miri cannot execute say so
# beside the code (server/trim.rs, net/sendfile.rs, net/listen.rs, body/file_read.rs); their
# tests that need a socket or a system call are `#[cfg_attr(miri, ignore)]`. The results and the runtime are in
# docs/RELIABILITY.md ("Memory safety under Miri").
#
# Two passes: the default x86-64 target (the scalar header kernel: Miri sees no CPU features
# beyond the compiled-in ones), then the same tests with SSE4.2/SSSE3 and AVX2/BMI compiled in,
# so the vector kernels (http1/simd/sse42.rs, avx2.rs, ws/mask_avx2.rs) and the dispatch to them run under Miri
# too. The NEON kernel is aarch64-only (covered under qemu by .ci/run, not Miri).
#
#   .ci/miri.sh            both passes
#   .ci/miri.sh scalar     the first pass only
set -euo pipefail
cd "$(dirname "$0")/.."

rustup +nightly component add miri rust-src >/dev/null 2>&1 || true
cargo +nightly miri setup >/dev/null

# The modules with unsafe code, as test-name filters.
filters=(
  ascii::
  server::clock::
  net::listen::
  routing::route_future::
  http1::head::storage::
  http1::last_head::
  http1::simd::
  websocket::text::
  proxy::field_array::
  ws::mask::
)
# clock.rs reads the real time (clock_gettime), which Miri isolates by default.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"

echo "== miri: default target features (scalar kernel)"
cargo +nightly miri test -p peregrine --lib -- "${filters[@]}"

if [ "${1:-}" != scalar ]; then
  echo "== miri: SSE4.2/SSSE3 and AVX2/BMI compiled in (vector kernels)"
  # A target directory of its own, so the two passes do not rebuild each other.
  RUSTFLAGS="-C target-feature=+sse4.2,+ssse3,+avx2,+bmi1,+bmi2,+lzcnt" \
    CARGO_TARGET_DIR=target/miri-simd \
    cargo +nightly miri test -p peregrine --lib -- http1::simd:: ws::mask::
fi
