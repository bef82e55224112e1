#!/usr/bin/env bash
# Upstream connection reuse and idle memory of `peregrine proxy` (issue 30's marks: reuse
# >= 99.9% over a million requests; <= 2 KB per idle client connection).
#
# Reuse: `peregrine load -n REQUESTS -c 64` through `peregrine proxy --workers 1` to a
# `peregrine serve --workers 1` backend. The backend's own metrics count the connections it
# accepted (peregrine_connections_total, less the one scrape of its metrics) and the requests it
# answered; the proxy's metrics count the requests it forwarded. Reuse = 1 - connections /
# requests: exact, and the backend's count, not the machine's.
#
# Idle memory: bench/idle_conns.py holds IDLE_CONNS kept-alive client connections to the
# proxy, one request each, and reports the proxy's VmRSS growth per connection.
#
# usage: bench/proxy_reuse.sh   (REQUESTS=1000000 IDLE_CONNS=10000 by default; BUILD=0 uses
#                                the release binary already built)
# Everything runs on 127.0.0.1; every process is stopped by PID at exit; the load is bounded by
# its request count and by `timeout`.
set -euo pipefail

REQUESTS=${REQUESTS:-1000000}
IDLE_CONNS=${IDLE_CONNS:-10000}
PORT_BACKEND=${PORT_BACKEND:-18520}
PORT_PROXY=${PORT_PROXY:-18521}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-bench-reuse.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

if [ "${BUILD:-1}" = 1 ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli)
fi
PEREGRINE="$ROOT/target/release/peregrine"

listening() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

metric() { # URL NAME: the sum of the series NAME's values
    curl -s "$1" | awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { print s + 0 }'
}

mkdir -p "$WORK/site"
printf 'Hello, World!' >"$WORK/site/plaintext"
ulimit -n "$(ulimit -Hn)"
"$PEREGRINE" serve "$WORK/site" --addr "127.0.0.1:$PORT_BACKEND" --workers 1 --quiet \
    --metrics /metrics --max-connections 100000 >/dev/null 2>&1 &
PIDS+=($!)
"$PEREGRINE" proxy --addr "127.0.0.1:$PORT_PROXY" --to "http://127.0.0.1:$PORT_BACKEND" \
    --workers 1 --quiet --metrics /metrics --max-connections 100000 --drain-grace 0 \
    >/dev/null 2>&1 &
PROXY=$!
PIDS+=($PROXY)
listening "$PORT_BACKEND"
listening "$PORT_PROXY"

timeout 900 "$PEREGRINE" load "http://127.0.0.1:$PORT_PROXY/plaintext" -c 64 -t 1 \
    -n "$REQUESTS" --no-progress --json "$WORK/load.json" >"$WORK/load.txt"
# The first scrape's connection is among the connections counted, and its request among the
# requests the second scrape counts.
accepted=$(metric "http://127.0.0.1:$PORT_BACKEND/metrics" peregrine_connections_total)
answered=$(($(metric "http://127.0.0.1:$PORT_BACKEND/metrics" peregrine_requests_total) - 1))
forwarded=$(metric "http://127.0.0.1:$PORT_PROXY/metrics" peregrine_upstream_requests_total)
upstream=$((accepted - 1))
echo "load: $(grep -i -m1 'req/s\|requests' "$WORK/load.txt" || true)"
sed 's/^/  /' "$WORK/load.txt" | head -20
echo "proxy forwarded $forwarded requests; the backend answered $answered on $upstream connections"
awk -v c="$upstream" -v r="$forwarded" \
    'BEGIN { printf "upstream connection reuse: %.4f%% (%d new connections / %d requests)\n", 100 * (1 - c / r), c, r }'

res=$(python3 "$ROOT/bench/idle_conns.py" 127.0.0.1 "$PORT_PROXY" "$PROXY" "$IDLE_CONNS")
read -r before after per closed <<<"$res"
echo "idle: $IDLE_CONNS client connections: proxy VmRSS $before -> $after KB ($per bytes each), $closed KB once closed"
