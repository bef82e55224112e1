#!/usr/bin/env bash
# HTTP/3 benchmark: the h3 + quinn server (examples/h3_quinn_peer.rs, one worker) and, where
# the binary has it, `peregrine serve --h3` (one worker), loaded by `peregrine load --h3`.
#
# With SERVERS including peregrine-h2, also peregrine's HTTP/2 over TLS (`serve` without
# --h3, loaded with `load --http2`), the same shapes, for comparison.
#
# Server pinned to CPU 0, the load (one thread, -t1) to CPU 1; servers alternated over ROUNDS
# rounds; medians reported. Shapes (DURATION s each, bounded by `timeout`):
#   c16m32   GET /plaintext (13 bytes), 16 connections x 32 streams
#   file     GET /1m.bin (1 MiB), 4 connections x 4 streams
# Reports req/s, the server's CPU time per request (utime+stime from /proc/PID/stat before and
# after, ticks -> µs via CLK_TCK, ÷ requests completed) and the load client's, p50 latency;
# one `summary h3-<shape>: ...` line per server, and a markdown table.
#
# With CALLGRIND=N, also counts the load client's user-space instructions per request
# (callgrind, -c1 -m1, N requests against the h3 + quinn server), and oha's HTTP/3 client's
# where `oha` is installed (`cargo install oha --locked --features http3`).
#
# usage: bench/h3.sh                     (DURATION=10 ROUNDS=3)
#        DURATION=5 ROUNDS=1 SERVERS="h3quinn" SHAPES=c16m32 CALLGRIND=20000 bench/h3.sh
# Everything runs on 127.0.0.1; every server is stopped by PID at exit.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
SHAPES=${SHAPES:-"c16m32 file"}
BASE_PORT=${BASE_PORT:-18830}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-h3-bench.XXXXXX)
TICK=$(getconf CLK_TCK)
declare -A PID PORT

cleanup() {
    for p in "${PID[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && cargo build --release -q -p peregrine --example h3_quinn_peer \
    && cargo build --release -q -p peregrine-cli)
BIN="$ROOT/target/release"
LOAD="$BIN/peregrine"

if [ -z "${SERVERS:-}" ]; then
    SERVERS=h3quinn
    if "$BIN/peregrine" serve --help 2>/dev/null | grep -q -- '--h3'; then
        SERVERS="peregrine h3quinn"
    fi
fi

mkdir -p "$WORK/www"
printf 'Hello, World!' >"$WORK/www/plaintext"
head -c $((1 << 20)) /dev/urandom >"$WORK/www/1m.bin"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# The load's protocol flag for SERVER: HTTP/2 over TLS for peregrine-h2, else HTTP/3.
proto() { if [ "$1" = peregrine-h2 ]; then echo --http2; else echo --h3; fi; }

start() {
    local s=$1 port=$2
    case $s in
        h3quinn) taskset -c 0 "$BIN/examples/h3_quinn_peer" --addr "127.0.0.1:$port" \
            --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" --dir "$WORK/www" 2>/dev/null & ;;
        peregrine) taskset -c 0 "$BIN/peregrine" serve "$WORK/www" --addr "127.0.0.1:$port" \
            --workers 1 --quiet --drain-grace 0 --h3 \
            --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" & ;;
        peregrine-h2) taskset -c 0 "$BIN/peregrine" serve "$WORK/www" --addr "127.0.0.1:$port" \
            --workers 1 --quiet --drain-grace 0 \
            --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" & ;;
    esac
    PID[$s]=$!
    PORT[$s]=$port
    for _ in $(seq 50); do
        timeout 5 "$LOAD" load "$(proto "$s")" --insecure -n 1 -c 1 --no-progress --timeout 1s \
            "https://localhost:$port/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "$s did not start" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run SERVER SHAPE -> appends "req_per_s server_us_per_req client_us_per_req p50_ms"
run() {
    local s=$1 shape=$2 args path
    case $shape in
        c16m32) args="-c 16 -m 32"; path=/plaintext ;;
        file) args="-c 4 -m 4"; path=/1m.bin ;;
    esac
    local pid=${PID[$s]} t0 t1
    t0=$(cpu_ticks "$pid")
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$WORK/time" timeout $((DURATION + 30)) taskset -c 1 "$LOAD" load \
        "$(proto "$s")" --insecure -t 1 $args -d "${DURATION}s" --no-progress --json "$WORK/out.json" \
        "https://localhost:${PORT[$s]}$path" >/dev/null
    t1=$(cpu_ticks "$pid")
    python3 - "$WORK/out.json" "$WORK/time" $((t1 - t0)) "$TICK" >>"$WORK/$s.$shape" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
user, sys_ = map(float, open(sys.argv[2]).read().split()[-2:])
n = max(r["requests"], 1)
server = int(sys.argv[3]) / int(sys.argv[4]) * 1e6 / n
client = (user + sys_) * 1e6 / n
errors = sum(r["errors"].values())
print(f'{r["req_per_s"]:.0f} {server:.3f} {client:.3f} {r["latency_us"]["p50"] / 1000:.3f} {errors}')
EOF
    echo "  round $r $s ($shape): $(tail -1 "$WORK/$s.$shape") (req/s, server µs/req, client µs/req, p50 ms, errors)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }

i=0
for s in $SERVERS; do
    start "$s" $((BASE_PORT + i))
    i=$((i + 1))
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
        for s in $SERVERS; do run "$s" "$shape"; done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo
echo "HTTP/3 (peregrine-h2: HTTP/2 over TLS), one worker, server on CPU 0, peregrine load -t1 on CPU 1, ${DURATION}s per run, medians of $ROUNDS rounds"
echo
echo "| shape | server | req/s | server CPU µs/req | client CPU µs/req | p50 ms |"
echo "|---|---|---:|---:|---:|---:|"
for shape in $SHAPES; do
    for s in $SERVERS; do
        f="$WORK/$s.$shape"
        [ -f "$f" ] || continue
        printf "| %s | %s | %.0f | %.3f | %.3f | %.3f |\n" "$shape" "$s" "$(col 1 "$f")" \
            "$(col 2 "$f")" "$(col 3 "$f")" "$(col 4 "$f")"
        echo "summary h3-$shape: $s $(col 1 "$f") req/s, server $(col 2 "$f") us/req" >&2
    done
done

if [ -n "${CALLGRIND:-}" ]; then
    url="https://localhost:${PORT[h3quinn]}/plaintext"
    echo
    echo "Client instructions per request (callgrind, -c1 -m1, $CALLGRIND requests to h3quinn):"
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.load" "$LOAD" load --h3 --insecure \
        -t 1 -c 1 -m 1 -n "$CALLGRIND" --no-progress "$url" >/dev/null 2>"$WORK/cg.load.log"
    ir=$(callgrind_annotate "$WORK/cg.load" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "peregrine load --h3: $((ir / CALLGRIND)) Ir/request (connect and TLS included)"
    if command -v oha >/dev/null; then
        valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.oha" oha --http-version 3 \
            --insecure -c 1 -n "$CALLGRIND" --no-tui "$url" >/dev/null 2>"$WORK/cg.oha.log"
        ir=$(callgrind_annotate "$WORK/cg.oha" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
        echo "oha --http-version 3: $((ir / CALLGRIND)) Ir/request (connect and TLS included)"
    else
        echo "oha not installed (cargo install oha --locked --features http3): no comparison"
    fi
fi
