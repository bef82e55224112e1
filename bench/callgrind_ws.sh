#!/usr/bin/env bash
# User-space instructions per echoed message of the WebSocket echo server (examples/ws_echo.rs),
# counted by callgrind: repeatable on a loaded machine, unlike CPU time. Kernel time is not
# counted.
#
# Starts the server under callgrind, warms it up, then for each shape counts two runs of
# `peregrine load --ws -t1 -n COUNT` (N/4 and N messages; the counters zeroed before and dumped
# after each) and prints the difference per message, the connections' opening and closing
# cancelled out:
#   s20   100 connections x 20-byte binary messages
#   s16k  100 connections x 16 KiB binary messages
#   json1k          100 connections x 1 KiB JSON-like text messages
#   json1k-deflate  the same with permessage-deflate
#
# usage: bench/callgrind_ws.sh [BIN]     (N=20000; BIN defaults to the release ws_echo example)
#        SHAPES=s20 N=50000 bench/callgrind_ws.sh
#        SHAPES="json1k json1k-deflate" bench/callgrind_ws.sh   (the cost of compression)
#        ARGS= bench/callgrind_ws.sh target/release/examples/ws_fastwebsockets   (a peer)
#        ARGS= SHAPES=s20 bench/callgrind_ws.sh target/release/examples/ws_tokio_floor
#            (tokio's own work per echo, the floor under every server built on it)
# Everything runs on 127.0.0.1; the server is stopped by PID at exit.
set -euo pipefail

N=${N:-20000}
PORT=${PORT:-18590}
SHAPES=${SHAPES:-"s20 s16k"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${1:-$TARGET/release/examples/ws_echo}
LOAD=${LOAD:-$TARGET/release/peregrine}
OUT=${OUT:-$(mktemp -d /tmp/peregrine-callgrind-ws.XXXXXX)}
mkdir -p "$OUT"
PID=

cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" \
    "$BIN" --addr "127.0.0.1:$PORT" ${ARGS---workers 1} 2>"$OUT/valgrind.log" &
PID=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.2
done

total() {
    local f
    f=$(ls -t "$OUT"/callgrind.out.* | head -1)
    awk '/^summary:/ {print $2}' "$f"
}

flags() {
    case $1 in
        s20) echo "-c 100 --size 20" ;;
        s16k) echo "-c 100 --size 16KiB" ;;
        json1k) echo "-c 100 --size 1KiB --text" ;;
        json1k-deflate) echo "-c 100 --size 1KiB --text --deflate" ;;
    esac
}

# Ir of one run of `load -n COUNT` (connections opened, messages echoed, connections closed).
measure() {
    local shape=$1 count=$2 done
    callgrind_control -z "$PID" >/dev/null
    # shellcheck disable=SC2046
    done=$(timeout 600 "$LOAD" load "ws://127.0.0.1:$PORT/" -t 1 $(flags "$shape") -n "$count" \
        --json - --no-progress 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["messages"])')
    callgrind_control -d "$shape-$count" "$PID" >/dev/null
    sleep 1
    echo "$done $(total)"
}

# Two runs, N/4 and N messages over the same connections count: the difference is N * 3/4
# messages with the connections' opening and closing cancelled out.
for shape in $SHAPES; do
    # shellcheck disable=SC2046
    timeout 300 "$LOAD" load "ws://127.0.0.1:$PORT/" -t 1 $(flags "$shape") -n 2000 --no-progress >/dev/null 2>&1
    read -r m1 ir1 < <(measure "$shape" $((N / 4)))
    read -r m2 ir2 < <(measure "$shape" "$N")
    awk -v a="$ir1" -v b="$ir2" -v m="$m1" -v n="$m2" -v s="$shape" \
        'BEGIN { printf "(%s) %d - %d messages: %d Ir, %.0f Ir/message\n", s, n, m, b - a, (b - a) / (n - m) }'
done
echo "dumps in $OUT (callgrind_annotate --inclusive=yes FILE)"
