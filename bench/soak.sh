#!/usr/bin/env bash
# Soak (issue 32): MINUTES of mixed good and hostile traffic with faults, on loopback only.
#
#   plain  `peregrine serve` (HTTP/1.1 + h2c), --access-log, --header-read-timeout 2s
#   tls    `peregrine serve` over TLS (h2 by ALPN and HTTP/1.1) and HTTP/3 (--h3: QUIC on the
#          same port, UDP), --access-log on a tmpfs that fills about halfway through (mounted
#          in its own mount namespace: `unshare -rm`, unprivileged, the network namespace
#          shared)
#   proxy  `peregrine proxy` (one worker, 4 pooled connections) in front of
#          examples/soak_backend.rs (one worker: an echo, a WebSocket echo, a path that panics)
#
# The driver (examples/soak/) runs the good clients alone for 20 s (their idle latency), then
# with the hostile ones for MINUTES, renaming the plain server's log and sending SIGHUP
# halfway, samples every process every 10 s, stops every client, waits for the descriptors to
# come back, and sends SIGTERM to the plain and TLS servers under good clients (HTTP/1.1, h2c,
# h2 and HTTP/3). Its own checks (0 failed good requests, bytes, RSS after the warm-up, fds,
# p99, drain) are followed here by the access logs': the plain server's two files hold one "soak-good" line per good request
# answered and one 408 line per slowloris head cut; the TLS server's written lines plus the
# dropped lines it reported equal its requests, and it said the running count of dropped lines
# while its disk stayed full.
#
# The warm-up after which RSS must stay within 10%: 10 minutes for a run of 30 minutes or more,
# else a third of the run (1 minute for the 3-minute CI form).
#
# usage: bench/soak.sh MINUTES            (RATE=400 paces each good client, BUILD=0 runs the
#                                          release binaries already built, KEEP=1 keeps the
#                                          work directory and prints it, SOAK_PORT_BASE=N
#                                          listens on ports N..N+3 instead of 18601..18604,
#                                          so a second soak can run beside another,
#                                          LOG_KIB=N sizes the TLS server's log tmpfs: the
#                                          disk fills sooner or later than halfway)
# Prints one line per check and PASS or FAIL; exits 1 on FAIL. Every process is stopped by PID.
set -euo pipefail

MINUTES=${1:?usage: bench/soak.sh MINUTES}
RATE=${RATE:-400}
PORT_BASE=${SOAK_PORT_BASE:-18601}
P_PLAIN=$PORT_BASE P_BACKEND=$((PORT_BASE + 1)) P_PROXY=$((PORT_BASE + 2)) P_TLS=$((PORT_BASE + 3))
SECONDS_SOAK=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')
if [ "$SECONDS_SOAK" -ge 1800 ]; then WARMUP=600; else WARMUP=$((SECONDS_SOAK / 3)); fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-soak.XXXXXX)
PIDS=()
cleanup() {
    [ -f "$WORK/tls.pid" ] && kill "$(cat "$WORK/tls.pid")" 2>/dev/null || true
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT INT TERM

if [ "${BUILD:-1}" = 1 ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli &&
        cargo build --release -q -p peregrine --example soak --example soak_backend)
fi
PEREGRINE="$ROOT/target/release/peregrine"
SOAK="$ROOT/target/release/examples/soak"
BACKEND="$ROOT/target/release/examples/soak_backend"

if ! unshare -rm true 2>/dev/null; then
    echo "soak: unshare -rm failed: the full-disk fault needs unprivileged user namespaces" \
        "(sysctl kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0) or root" >&2
    exit 1
fi
"$SOAK" gen "$WORK"
mkdir -p "$WORK/logs" "$WORK/fulllog"

wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

"$BACKEND" --addr "127.0.0.1:$P_BACKEND" 2>"$WORK/backend.err" &
PIDS+=($!); BACKEND_PID=$!
"$PEREGRINE" serve "$WORK/site" --addr "127.0.0.1:$P_PLAIN" --access-log "$WORK/logs/access.log" \
    --header-read-timeout 2s --drain-grace 1s >"$WORK/plain.out" 2>"$WORK/plain.err" &
PIDS+=($!); PLAIN_PID=$!
"$PEREGRINE" proxy --addr "127.0.0.1:$P_PROXY" --to "http://127.0.0.1:$P_BACKEND" --workers 1 \
    --keepalive 4 --quiet >"$WORK/proxy.out" 2>"$WORK/proxy.err" &
PIDS+=($!); PROXY_PID=$!

# About 4 x RATE lines a second reach the TLS server (~110 bytes each): a log that fills
# halfway through. The mount lives as long as the shell that made it, which counts the lines
# once the server has exited.
LOG_KIB=${LOG_KIB:-$(( (RATE * 4 * (SECONDS_SOAK / 2 + 20) * 110 / 1024) + 16 ))}
unshare -rm sh -c '
    mount -t tmpfs -o "size=$2k" tmpfs "$0/fulllog" || exit 1
    "$1" serve "$0/site" --addr "127.0.0.1:$3" --tls-cert "$0/cert.pem" --tls-key "$0/key.pem" \
        --h3 --drain-grace 1s --access-log "$0/fulllog/access.log" >"$0/tls.out" 2>"$0/tls.err" &
    echo $! >"$0/tls.pid"
    wait $!; echo $? >"$0/tls.exit"
    tr -cd "\n" <"$0/fulllog/access.log" | wc -c >"$0/tls.lines"
    df -k "$0/fulllog" | tail -1 >"$0/tls.df"
' "$WORK" "$PEREGRINE" "$LOG_KIB" "$P_TLS" &
PIDS+=($!)
for p in $P_BACKEND $P_PLAIN $P_PROXY $P_TLS; do wait_port "$p"; done
TLS_PID=$(cat "$WORK/tls.pid")

set +e
"$SOAK" run --dir "$WORK" --plain "127.0.0.1:$P_PLAIN" --tls "127.0.0.1:$P_TLS" \
    --proxy "127.0.0.1:$P_PROXY" --serve-pid "$PLAIN_PID" --tls-pid "$TLS_PID" \
    --log "$WORK/logs/access.log" --pid "serve=$PLAIN_PID" --pid "serve-tls=$TLS_PID" \
    --pid "proxy=$PROXY_PID:4" --pid "backend=$BACKEND_PID:4" --seconds "$SECONDS_SOAK" --warmup-seconds "$WARMUP" \
    --rate "$RATE" --header-timeout 2 --out "$WORK/soak.json"
DRIVER=$?
wait "$PLAIN_PID"; PLAIN_EXIT=$?
# The driver sent it SIGTERM in its drain; again in case it stopped before.
kill -TERM "$TLS_PID" 2>/dev/null
for _ in $(seq 300); do [ -f "$WORK/tls.lines" ] && [ -s "$WORK/tls.lines" ] && break; sleep 0.1; done
set -e

FAIL=0
check() { # check NAME OK DETAIL
    if [ "$2" = 1 ]; then echo "check PASS: $1 ($3)"; else echo "check FAIL: $1 ($3)"; FAIL=1; fi
}
[ "$DRIVER" = 0 ] || FAIL=1
j() { python3 -c "import json,sys; print(json.load(open('$WORK/soak.json'))$1)"; }

check "the plain server exited 0 after SIGTERM" "$([ "$PLAIN_EXIT" = 0 ] && echo 1)" "exit $PLAIN_EXIT"
# The plain server's log: renamed halfway (access.log.1) and reopened on SIGHUP (access.log).
cat "$WORK/logs/access.log.1" "$WORK/logs/access.log" >"$WORK/plain.log" 2>/dev/null || true
lines1=$(grep -c '' "$WORK/logs/access.log.1" 2>/dev/null || echo 0)
lines2=$(grep -c '' "$WORK/logs/access.log" 2>/dev/null || echo 0)
good_lines=$(grep -c '"soak-good"$' "$WORK/plain.log" || true)
lines408=$(grep -cE '" 408 [0-9-]+ ' "$WORK/plain.log" || true)
good_plain=$(j "['good_ok_by_target']['plain']")
cut=$(j "['slowloris_cut']")
check "SIGHUP: both log files written" "$([ "$lines1" -gt 0 ] && [ "$lines2" -gt 0 ] && echo 1)" \
    "$lines1 lines before the reopen, $lines2 after"
check "plain log: a soak-good line per good request answered" \
    "$([ "$good_lines" = "$good_plain" ] && echo 1)" "$good_lines lines, $good_plain answered"
check "plain log: a 408 line per slowloris head cut" "$([ "$lines408" = "$cut" ] && echo 1)" \
    "$lines408 lines, $cut heads cut"
echo "plain log: $((lines1 + lines2)) lines: $good_lines good, $lines408 408, $((lines1 + lines2 - good_lines - lines408)) from the other hostile clients"

# The TLS server's log on the full tmpfs.
TLS_EXIT=$(cat "$WORK/tls.exit" 2>/dev/null || echo none)
written=$(cat "$WORK/tls.lines" 2>/dev/null || echo 0)
dropped=$(grep -o 'access log: [0-9]* lines dropped' "$WORK/tls.err" | awk '{s += $3} END {print s + 0}')
good_tls=$(j "['good_ok_by_target']['tls']")
check "the TLS server exited 0 after SIGTERM" "$([ "$TLS_EXIT" = 0 ] && echo 1)" "exit $TLS_EXIT"
check "full disk: the log filled and lines were dropped" "$([ "$dropped" -gt 0 ] && echo 1)" \
    "$(cat "$WORK/tls.df" 2>/dev/null | awk '{print $3 " KiB used of " $2}'); first error: $(grep -m1 'access log' "$WORK/tls.err" || echo none)"
check "full disk: lines written + dropped reported = requests" \
    "$([ $((written + dropped)) = "$good_tls" ] && echo 1)" "$written + $dropped, $good_tls requests"
# While the disk stays full the writer says its running count every 10 s ("still failing").
running=$(grep -c 'access log: still failing' "$WORK/tls.err" || true)
check "full disk: the running dropped count said while the disk stayed full" \
    "$([ "$running" -gt 0 ] && echo 1)" \
    "$running times; the last: $(grep 'access log: still failing' "$WORK/tls.err" | tail -1 | sed 's/.*): //')"
panics=$(grep -c 'handler panicked' "$WORK/backend.err" || true)
echo "backend: $panics handler panics, each answered 500 through the proxy ($(j "['good']['panic_proxy']['ok']") panic-path checks ok)"

if [ "${KEEP:-0}" = 1 ]; then cp "$WORK/soak.json" "$ROOT/target/soak.json"; fi
if [ "$FAIL" = 0 ]; then echo "PASS"; else echo "FAIL"; exit 1; fi
