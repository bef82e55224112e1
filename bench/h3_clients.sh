#!/usr/bin/env bash
# HTTP/3 load clients compared: `peregrine load --h3` against oha's HTTP/3 client (h3 + quinn;
# `cargo install oha --locked --features http3`), both loading the h3 + quinn server
# (examples/h3_quinn_peer.rs, one worker, pinned to CPU 0) with GET /plaintext (13 bytes),
# 16 connections x 32 streams each, the client pinned to CPU 1; clients alternated over ROUNDS
# rounds of DURATION seconds. Reports each client's CPU time per request (user + system, from
# /usr/bin/time, ÷ successful requests) and req/s, medians, and the ratio.
#
# usage: bench/h3_clients.sh                (DURATION=10 ROUNDS=3; OHA=path/to/oha)
# Everything runs on 127.0.0.1; the server is stopped by PID at exit.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18850}
OHA=${OHA:-oha}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-h3-clients.XXXXXX)
SERVER=

cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

command -v "$OHA" >/dev/null || {
    echo "oha not found: cargo install oha --locked --features http3 (or OHA=path)" >&2
    exit 1
}
(cd "$ROOT" && cargo build --release -q -p peregrine --example h3_quinn_peer \
    && cargo build --release -q -p peregrine-cli)
BIN="$ROOT/target/release"

mkdir -p "$WORK/www"
printf 'Hello, World!' >"$WORK/www/plaintext"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
taskset -c 0 "$BIN/examples/h3_quinn_peer" --addr "127.0.0.1:$PORT" \
    --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" --dir "$WORK/www" 2>/dev/null &
SERVER=$!
URL="https://localhost:$PORT/plaintext"
for _ in $(seq 50); do
    timeout 5 "$BIN/peregrine" load --h3 --insecure -n 1 -c 1 --no-progress --timeout 1s "$URL" \
        >/dev/null 2>&1 && break
    sleep 0.2
done

# run CLIENT -> appends "req_per_s client_us_per_req" to $WORK/CLIENT
run() {
    local c=$1 n
    case $c in
        peregrine)
            /usr/bin/time -f '%U %S' -o "$WORK/time" timeout $((DURATION + 30)) taskset -c 1 \
                "$BIN/peregrine" load --h3 --insecure -t 1 -c 16 -m 32 -d "${DURATION}s" \
                --no-progress --json "$WORK/out.json" "$URL" >/dev/null
            n=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"] - sum(r["errors"].values()))' "$WORK/out.json")
            ;;
        oha)
            /usr/bin/time -f '%U %S' -o "$WORK/time" timeout $((DURATION + 30)) taskset -c 1 \
                "$OHA" --http-version 3 --insecure -c 16 -p 32 -z "${DURATION}s" --no-tui \
                --output-format json "$URL" >"$WORK/out.json"
            n=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["statusCodeDistribution"].get("200", 0))' "$WORK/out.json")
            ;;
    esac
    python3 - "$WORK/time" "$n" "$DURATION" >>"$WORK/$c" <<'EOF'
import sys
user, sys_ = map(float, open(sys.argv[1]).read().split()[-2:])
n = max(int(sys.argv[2]), 1)
print(f"{n / float(sys.argv[3]):.0f} {(user + sys_) * 1e6 / n:.3f}")
EOF
    echo "  round $r $c: $(tail -1 "$WORK/$c") (req/s, client CPU µs/req)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
    run peregrine
    run oha
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo
echo "HTTP/3 clients against the h3 + quinn server (CPU 0), client on CPU 1, -c16 x 32 streams, ${DURATION}s per run, medians of $ROUNDS rounds"
echo
echo "| client | req/s | client CPU µs/req |"
echo "|---|---:|---:|"
for c in peregrine oha; do
    printf "| %s | %.0f | %.3f |\n" "$c" "$(col 1 "$WORK/$c")" "$(col 2 "$WORK/$c")"
done
awk -v a="$(col 2 "$WORK/peregrine")" -v b="$(col 2 "$WORK/oha")" \
    'BEGIN { printf "\nsummary h3-clients: peregrine load --h3 / oha CPU per request: %.2fx\n", a / b }'
