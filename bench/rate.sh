#!/usr/bin/env bash
# `peregrine load --rate` checked against a server with a fixed service time (issue 15): the
# fixed_service example (one worker, each request spins SERVICE_US µs) on CPU 0, the generator
# (one thread) on CPU 1.
#   1. capacity: a closed-loop run with CONNS connections (the server's single queue stays full)
#   2. round trip: --rate at half that capacity against the same example with a 0 µs service
#   3. the check: --rate at half capacity against SERVICE_US; its p50 should be within 10 % of
#      SERVICE_US + the round trip's p50
# Each step ROUNDS times, DURATION s each (the rate runs RATE_DURATION s); medians reported.
#
# usage: bench/rate.sh          (SERVICE_US=1000 CONNS=16 DURATION=5 RATE_DURATION=10 ROUNDS=3)
# Set LOCK=/path/to/lockfile to hold that lock (flock) around each timed run.
# Everything runs on 127.0.0.1; servers are stopped by PID at exit; runs are bounded.
set -euo pipefail

SERVICE_US=${SERVICE_US:-1000}
CONNS=${CONNS:-16}
DURATION=${DURATION:-5}
RATE_DURATION=${RATE_DURATION:-10}
ROUNDS=${ROUNDS:-3}
BASE_PORT=${BASE_PORT:-18770}
LOCK=${LOCK:-}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-rate-bench.XXXXXX)
declare -A PID
cleanup() {
    for p in "${PID[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && cargo build --release -q -p peregrine --example fixed_service \
    && cargo build --release -q -p peregrine-cli)
BIN="$ROOT/target/release"
SLOW=$BASE_PORT FAST=$((BASE_PORT + 1))

start() {
    taskset -c 0 "$BIN/examples/fixed_service" --addr "127.0.0.1:$1" --service-us "$2" 2>/dev/null &
    PID[$1]=$!
    for _ in $(seq 50); do
        curl -sf "http://127.0.0.1:$1/" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "fixed_service on port $1 did not start" >&2
    exit 1
}
start "$SLOW" "$SERVICE_US"
start "$FAST" 0

# load PORT ARGS...: one bounded run on CPU 1 (under $LOCK if set); prints "req/s p50_us p90_us p99_us late".
load() {
    local port=$1
    shift
    local cmd=(timeout 60 taskset -c 1 "$BIN/peregrine" load "http://127.0.0.1:$port/" --http1 -t1
        "$@" --no-progress --json "$WORK/out.json")
    if [ -n "$LOCK" ]; then flock "$LOCK" "${cmd[@]}" >/dev/null; else "${cmd[@]}" >/dev/null; fi
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
        assert d['errors_total']==0, d['errors']; \
        l=d['latency_us']; \
        print(round(d['requests']/d['duration_s']), l['p50'], l['p90'], l['p99'], d['late'])" \
        "$WORK/out.json"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
    load "$SLOW" -c"$CONNS" -d"${DURATION}s" >>"$WORK/capacity"
    echo "  round $r capacity: $(tail -1 "$WORK/capacity") (req/s p50 p90 p99 µs, late)" >&2
done
capacity=$(cut -d' ' -f1 "$WORK/capacity" | median)
rate=$((${capacity%.*} / 2))
for r in $(seq "$ROUNDS"); do
    load "$FAST" -c"$CONNS" --rate "$rate" -d"${RATE_DURATION}s" >>"$WORK/rtt"
    echo "  round $r round trip (0 µs) at $rate/s: $(tail -1 "$WORK/rtt")" >&2
    load "$SLOW" -c"$CONNS" --rate "$rate" -d"${RATE_DURATION}s" >>"$WORK/rated"
    echo "  round $r ${SERVICE_US} µs at $rate/s: $(tail -1 "$WORK/rated")" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

rtt=$(cut -d' ' -f2 "$WORK/rtt" | median)
p50=$(cut -d' ' -f2 "$WORK/rated" | median)
p90=$(cut -d' ' -f3 "$WORK/rated" | median)
p99=$(cut -d' ' -f4 "$WORK/rated" | median)
late=$(cut -d' ' -f5 "$WORK/rated" | median)
awk -v s="$SERVICE_US" -v c="$capacity" -v r="$rate" -v rtt="$rtt" -v p="$p50" -v l="$late" -v p90="$p90" -v p99="$p99" 'BEGIN {
    e = s + rtt
    printf "summary rate-%dus: capacity %.0f req/s, rate %d req/s, round trip p50 %d us, p50 %d us, expected %d us, off by %+.1f%% (within 10%%: %s), p90 %d us, p99 %d us, late %d\n",
        s, c, r, rtt, p, e, (p - e) * 100 / e, ((p - e) / e <= 0.1 && (e - p) / e <= 0.1) ? "yes" : "no", p90, p99, l }'
