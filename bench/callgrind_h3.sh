#!/usr/bin/env bash
# HTTP/3 server instructions per request, split by where the code lives: `peregrine serve --h3`
# and the h3 + quinn peer (examples/h3_quinn_peer.rs), each one worker under callgrind
# (user-space instructions; repeatable on a loaded machine; the kernel's share is not counted),
# loaded by `peregrine load --h3` (not under callgrind) with GET /plaintext (13 bytes),
# 16 connections x 32 streams, as bench/h3.sh's c16m32 shape.
#
# Per server: a warm-up run, then the counters are zeroed before each of two runs, of N1 and
# N2 requests, and dumped after it. Each run opens its own 16 connections (QUIC + TLS
# handshakes), so the per-request figure is the difference of the two runs divided by
# N2 - N1: what one more request costs, without the handshakes (also printed: run 2's total
# with its handshakes, ÷ N2). bench/callgrind_split.py groups the instructions (QUIC, TLS +
# crypto, the HTTP/3 layer, handler, tokio, allocator, libc, ...).
#
# With SHAPE=file: GET of a 1 MiB file, 4 connections x 4 streams, as bench/h3.sh's file shape
# (N1=40 N2=200 by default): where the bytes of a large response go (QUIC's packet path vs the
# HTTP/3 layer).
#
# usage: bench/callgrind_h3.sh                 (N1=4000 N2=24000; SERVERS="peregrine h3quinn")
#        SHAPE=file bench/callgrind_h3.sh       (1 MiB, -c4 -m4; N1=40 N2=200)
#        OUT=dir bench/callgrind_h3.sh          (keep the dumps in dir)
#        SYSCALLS=1 bench/callgrind_h3.sh       (also system calls per request, under strace;
#                                                CALLGRIND=0 for those alone)
# Everything runs on 127.0.0.1; every server is stopped by PID at exit.
set -euo pipefail

SHAPE=${SHAPE:-plaintext}
case $SHAPE in
    plaintext) N1=${N1:-4000} N2=${N2:-24000} CONNS=16 STREAMS=32 ;;
    file) N1=${N1:-40} N2=${N2:-200} CONNS=4 STREAMS=4 ;;
    *) echo "SHAPE is plaintext or file" >&2; exit 2 ;;
esac
PORT=${PORT:-18850}
SERVERS=${SERVERS:-"peregrine h3quinn"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d /tmp/peregrine-callgrind-h3.XXXXXX)}
mkdir -p "$OUT"
BIN="$ROOT/target/release"
PID=

cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

for bin in peregrine examples/h3_quinn_peer; do
    [ -x "$BIN/$bin" ] || {
        echo "build first: cargo build --release -p peregrine-cli && cargo build --release -p peregrine --example h3_quinn_peer" >&2
        exit 1
    }
done

mkdir -p "$OUT/www"
printf 'Hello, World!' >"$OUT/www/plaintext"
head -c 1048576 /dev/urandom >"$OUT/www/file"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$OUT/key.pem" -out "$OUT/cert.pem" 2>/dev/null

URL="https://localhost:$PORT/$SHAPE"

# load N -> prints the number of requests answered
load() {
    timeout 600 "$BIN/peregrine" load --h3 --insecure -t 1 -c "$CONNS" -m "$STREAMS" -n "$1" --timeout 60s \
        --no-progress --json "$OUT/load.json" "$URL" >/dev/null
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); e = sum(r["errors"].values()); print(r["requests"]) if not e else sys.exit(f"{e} errors")' \
        "$OUT/load.json"
}

for s in $SERVERS; do
    [ "${CALLGRIND:-1}" = 0 ] && break
    case $s in
        peregrine) cmd=("$BIN/peregrine" serve "$OUT/www" --addr "127.0.0.1:$PORT" --workers 1
            --quiet --drain-grace 0 --h3 --tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem") ;;
        h3quinn) cmd=("$BIN/examples/h3_quinn_peer" --addr "127.0.0.1:$PORT"
            --tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem" --dir "$OUT/www") ;;
        *) echo "unknown server $s" >&2; exit 2 ;;
    esac
    valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$OUT/$s.%p" \
        "${cmd[@]}" >"$OUT/$s.log" 2>"$OUT/$s.valgrind.log" &
    PID=$!
    up=
    for _ in $(seq 100); do
        timeout 20 "$BIN/peregrine" load --h3 --insecure -n 1 -c 1 --no-progress --timeout 5s \
            "$URL" >/dev/null 2>&1 && { up=1; break; }
        sleep 0.5
    done
    [ -n "$up" ] || { echo "$s did not start" >&2; exit 1; }
    load $((N1 / 2)) >/dev/null
    sleep 1
    n=()
    for run in 1 2; do
        want=$([ "$run" = 1 ] && echo "$N1" || echo "$N2")
        callgrind_control -z "$PID" >/dev/null 2>&1
        n+=("$(load "$want")")
        # Let the closed connections finish (QUIC's draining period) before the dump.
        sleep 2
        callgrind_control -d "run$run" "$PID" >/dev/null 2>&1
        sleep 1
    done
    kill "$PID"
    wait "$PID" 2>/dev/null || true
    PID=
    # The newest dumps: OUT may hold an earlier run's.
    d1=$(grep -l '^desc: Trigger: dump run1' $(ls -t "$OUT/$s".*) | head -1)
    d2=$(grep -l '^desc: Trigger: dump run2' $(ls -t "$OUT/$s".*) | head -1)
    CONNS=$CONNS python3 "$ROOT/bench/callgrind_split.py" "$s" "${n[0]}" "$d1" "${n[1]}" "$d2"
    echo
done
if [ -n "${SYSCALLS:-}" ]; then
    # The kernel's side, which callgrind does not see: system calls per request, each server
    # under `strace -c -f` (not callgrind) for one run of N2 requests after a warm-up.
    for s in $SERVERS; do
        case $s in
            peregrine) cmd=("$BIN/peregrine" serve "$OUT/www" --addr "127.0.0.1:$PORT" --workers 1
                --quiet --drain-grace 0 --h3 --tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem") ;;
            h3quinn) cmd=("$BIN/examples/h3_quinn_peer" --addr "127.0.0.1:$PORT"
                --tls-cert "$OUT/cert.pem" --tls-key "$OUT/key.pem" --dir "$OUT/www") ;;
        esac
        "${cmd[@]}" >"$OUT/$s.log" 2>&1 &
        PID=$!
        for _ in $(seq 50); do
            timeout 5 "$BIN/peregrine" load --h3 --insecure -n 1 -c 1 --no-progress --timeout 1s \
                "$URL" >/dev/null 2>&1 && break
            sleep 0.2
        done
        load 2000 >/dev/null
        strace -c -f -o "$OUT/$s.strace" -p "$PID" 2>/dev/null &
        tracer=$!
        sleep 1
        n=$(load "$N2")
        sleep 1
        kill -INT "$tracer"
        wait "$tracer" 2>/dev/null || true
        kill "$PID"
        wait "$PID" 2>/dev/null || true
        PID=
        echo "$s: system calls per request ($n requests):"
        awk -v n="$n" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $4 > n / 100 {
            printf "  %-16s %.3f\n", $NF, $4 / n }' "$OUT/$s.strace"
    done
fi
echo "dumps in $OUT (callgrind_annotate FILE)"
