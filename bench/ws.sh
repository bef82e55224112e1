#!/usr/bin/env bash
# WebSocket echo benchmark: peregrine's echo server (examples/ws_echo.rs) against
# fastwebsockets, tokio-websockets and tokio-tungstenite (examples/ws_fastwebsockets.rs,
# ws_tokio_websockets.rs, ws_tungstenite.rs: one current-thread runtime each) and the kernel
# floor (bench/floor_ws_echo.c: a bare epoll loop, one read and one write per message, no
# WebSocket work but unmasking).
#
# Server pinned to CPU 0, `peregrine load --ws -t1` to CPU 1; servers alternated over ROUNDS
# rounds per shape; medians. Shapes (DURATION s each):
#   s20             100 connections x 20-byte binary messages
#   s16k            500 connections x 16 KiB binary messages
#   json1k          100 connections x 1 KiB JSON-like text messages
#   json1k-deflate  the same with permessage-deflate (peregrine only: no peer compresses)
# Reports messages/s and the server's CPU per message, total, user and system (utime, stime
# from /proc/PID/stat ÷ messages), ratios to the floor and to the better of fastwebsockets and
# tokio-websockets, and bytes written per message (/proc/PID/io). Then the idle memory per
# WebSocket with IDLE open idle WebSockets (bench/idle_ws.py, each server started afresh), and
# with GEN=1 the load generator against tokio-websockets' client and the C floor client
# (bench/floor_ws_client.c), each generator's CPU per message from its rusage.
#
# usage: bench/ws.sh                       (DURATION=5 ROUNDS=5 IDLE=10000 GEN=1)
#        DURATION=3 ROUNDS=3 SHAPES="s20" PEERS="peregrine floor" IDLE=0 GEN=0 bench/ws.sh
# Set LOCK=/path/to/lockfile to hold that lock (flock) for the whole run.
# Everything runs on 127.0.0.1; every server is stopped by PID at exit; runs are bounded.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-ws-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

(cd "$ROOT" && cargo build --release -q -p peregrine --example ws_echo --example ws_fastwebsockets \
    --example ws_tokio_websockets --example ws_tungstenite --example ws_tokio_websockets_client \
    && cargo build --release -q -p peregrine-cli)
cc -O2 -o "$WORK/floor_ws_echo" "$ROOT/bench/floor_ws_echo.c"
cc -O2 -o "$WORK/floor_ws_client" "$ROOT/bench/floor_ws_client.c"
ulimit -n $(( ${IDLE:-10000} + 2000 ))

if [ -n "${LOCK:-}" ]; then
    flock "$LOCK" python3 "$ROOT/bench/ws_bench.py" "$TARGET/release" "$WORK"
else
    python3 "$ROOT/bench/ws_bench.py" "$TARGET/release" "$WORK"
fi
