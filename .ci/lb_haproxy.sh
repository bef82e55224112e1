#!/usr/bin/env bash
# Two `peregrine serve` instances behind Debian's HAProxy (send-proxy-v2, HTTP health checks on
# /healthz), under load from wrk through HAProxy:
#   phase 1: SIGTERM to instance a mid-run: the drain must lose no request;
#   then a is restarted and comes back UP;
#   phase 2: SIGKILL to instance b mid-run: failures are bounded by the requests in flight on
#            b (at most one per wrk connection);
# and the access log shows the client's address (127.0.0.1), not HAProxy's (it connects from
# 127.0.0.2, the only address the instances trust for the PROXY header).
#
# usage: .ci/lb_haproxy.sh [BIN]   (BIN defaults to target/release/peregrine; build it first)
# Loopback only; every process is stopped by PID at exit; bounded in time (about 40 s).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${1:-target/release/peregrine}
FRONT=${FRONT:-18610}
PORT_A=${PORT_A:-18611}
PORT_B=${PORT_B:-18612}
STATS=${STATS:-18613}
CONNS=${CONNS:-16}
DURATION=${DURATION:-6}
GRACE=${GRACE:-2s}

apt_install() {
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$@" >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq "$@" >/dev/null; fi
}
command -v haproxy >/dev/null 2>&1 || apt_install haproxy
command -v wrk >/dev/null 2>&1 || apt_install wrk
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release -p peregrine-cli first" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/www"
echo "hello from peregrine" > "$tmp/www/index.html"

# start NAME PORT: one instance; its PID in $tmp/NAME.pid, its access log appended to NAME.log.
start() {
  "$BIN" serve "$tmp/www" --addr "127.0.0.1:$2" --workers 1 \
    --proxy-protocol --proxy-trust 127.0.0.2 --health /healthz --metrics /metrics \
    --drain-grace "$GRACE" >>"$tmp/$1.out" 2>>"$tmp/$1.log" &
  echo $! > "$tmp/$1.pid"
  pids+=("$!")
}

cat > "$tmp/haproxy.cfg" <<CFG
global
  maxconn 2000
defaults
  mode http
  timeout connect 1s
  timeout client 10s
  timeout server 10s
  # A connection refused (an instance gone) is retried on the other one; a response lost
  # mid-request is not retried, so it shows up as a failure.
  retries 3
  option redispatch 1
frontend fe
  bind 127.0.0.1:$FRONT
  default_backend be
backend be
  balance roundrobin
  # HAProxy connects from 127.0.0.2, so its own address differs from the client's.
  source 127.0.0.2
  option httpchk GET /healthz
  http-check expect status 200
  default-server check inter 200ms fall 1 rise 2 send-proxy-v2
  server a 127.0.0.1:$PORT_A
  server b 127.0.0.1:$PORT_B
listen stats
  bind 127.0.0.1:$STATS
  stats enable
  stats uri /stats
CFG
haproxy -c -q -f "$tmp/haproxy.cfg"

start a "$PORT_A"
start b "$PORT_B"
haproxy -f "$tmp/haproxy.cfg" -db >"$tmp/haproxy.log" 2>&1 &
pids+=("$!")

# state SERVER: UP, DOWN, ... as HAProxy's stats page says.
state() {
  curl -fsS "http://127.0.0.1:$STATS/stats;csv" 2>/dev/null \
    | awk -F, -v s="$1" '$1 == "be" && $2 == s { print $18 }'
}
wait_state() {
  for _ in $(seq 100); do
    [ "$(state "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  echo "server $1 never became $2 (is $(state "$1"))" >&2
  exit 1
}
wait_state a UP
wait_state b UP

# phase NAME SIGNAL INSTANCE: wrk through HAProxy; the signal goes to INSTANCE after 2 s.
# Prints the wrk summary; sets REQUESTS and FAILED.
phase() {
  wrk -t2 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$FRONT/" >"$tmp/wrk-$1.txt" 2>&1 &
  local wrk=$!
  pids+=("$wrk")
  sleep 2
  kill -"$2" "$(cat "$tmp/$3.pid")"
  wait "$wrk"
  REQUESTS=$(awk '/requests in/ { print $1 }' "$tmp/wrk-$1.txt")
  local non2xx socket
  non2xx=$(awk '/Non-2xx/ { print $NF }' "$tmp/wrk-$1.txt")
  socket=$(awk '/Socket errors/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$tmp/wrk-$1.txt")
  FAILED=$(( ${non2xx:-0} + ${socket:-0} ))
  echo "phase $1: SIG$2 to $3 after 2 s of ${DURATION} s, $CONNS connections: $REQUESTS requests, $FAILED failed (non-2xx ${non2xx:-0}, socket errors ${socket:-0})"
}

phase drain TERM a
[ "${REQUESTS:-0}" -gt 1000 ] || { cat "$tmp/wrk-drain.txt"; echo "too few requests" >&2; exit 1; }
if [ "$FAILED" -ne 0 ]; then
  cat "$tmp/wrk-drain.txt"; echo "the drain lost requests" >&2; exit 1
fi
# a exits by itself once drained, with status 0.
for _ in $(seq 100); do kill -0 "$(cat "$tmp/a.pid")" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$(cat "$tmp/a.pid")" 2>/dev/null; then echo "a did not exit after its drain" >&2; exit 1; fi
wait "$(cat "$tmp/a.pid")" || { echo "a exited with status $?" >&2; exit 1; }
grep -qE '"GET /healthz HTTP/1\.[01]" 503 ' "$tmp/a.log" || { echo "a never answered a health check with 503" >&2; exit 1; }
echo "a drained and exited 0; its health check answered 503 during the drain"

start a "$PORT_A"
wait_state a UP
echo "a restarted and UP"

phase kill KILL b 2>/dev/null  # (bash's "Killed" notice for b)
[ "${REQUESTS:-0}" -gt 1000 ] || { cat "$tmp/wrk-kill.txt"; echo "too few requests" >&2; exit 1; }
if [ "$FAILED" -gt "$CONNS" ]; then
  cat "$tmp/wrk-kill.txt"
  echo "$FAILED failures: more than the $CONNS requests that can be in flight on b" >&2; exit 1
fi
echo "b killed: $FAILED failed, at most the $CONNS that can be in flight on it"

# The client's address in the access log: wrk's 127.0.0.1, never HAProxy's 127.0.0.2 (which
# its health checks, PROXY LOCAL, do show).
# Lines in the combined format: `ADDRESS - - [date] "GET / HTTP/1.1" 200 ...`.
client=$(grep -c '^127\.0\.0\.1 .*"GET / HTTP/1\.1" 200 ' "$tmp/a.log" || true)
proxy=$(grep -c '^127\.0\.0\.2 .*"GET / HTTP' "$tmp/a.log" || true)
checks=$(grep -c '^127\.0\.0\.2 .*"GET /healthz ' "$tmp/a.log" || true)
echo "access log of a: $client requests from the client 127.0.0.1, $proxy from HAProxy's 127.0.0.2, $checks health checks from 127.0.0.2"
[ "$client" -gt 0 ] && [ "$proxy" -eq 0 ] && [ "$checks" -gt 0 ] || { echo "wrong addresses in the access log" >&2; exit 1; }
# A direct connection from an untrusted address is closed unserved.
if curl -fsS "http://127.0.0.1:$PORT_A/" -o /dev/null 2>/dev/null; then
  echo "an untrusted client was served" >&2; exit 1
fi
echo "a direct request from 127.0.0.1 (untrusted for PROXY) was closed unserved"
curl -fsS "http://127.0.0.1:$FRONT/" >/dev/null  # still serving through HAProxy
echo "load balancer test passed"
