#!/usr/bin/env bash
# h2spec (HTTP/2 conformance, 145 cases; 146 with -S strict) against the plaintext example,
# over h2c (prior knowledge) and over TLS (ALPN h2). Every case must pass. With the
# `peregrine` binary as a second argument, the same runs against `peregrine proxy`'s listener,
# in front of the plaintext example over HTTP/1.1.
#
# usage: .ci/h2spec.sh PLAINTEXT_BIN [PEREGRINE_BIN]   (installs h2spec with `go install` when missing)
# Loopback only; the servers are stopped by PID at exit; each h2spec run is bounded in time.
set -euo pipefail
BIN=$1
PEREGRINE=${2:-}
PORT=${PORT:-18590}
BACKEND_PORT=${BACKEND_PORT:-18591}
WORK=$(mktemp -d /tmp/peregrine-h2spec.XXXXXX)
PID=
BACKEND=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    [ -n "$BACKEND" ] && kill "$BACKEND" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

H2SPEC=$(command -v h2spec || true)
if [ -z "$H2SPEC" ]; then
    if ! command -v go >/dev/null; then
        # Debian's Go is enough to build h2spec.
        if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq golang-go >/dev/null
        else sudo apt-get update -qq && sudo apt-get install -y -qq golang-go >/dev/null; fi
    fi
    GOBIN="$WORK/bin" go install github.com/summerwind/h2spec/cmd/h2spec@latest
    H2SPEC="$WORK/bin/h2spec"
fi

run() {
    local name=$1; shift
    local out="$WORK/$name.log"
    # -P /plaintext: a path with content (the flow-control cases wait for DATA).
    if ! timeout 300 "$H2SPEC" -h 127.0.0.1 -p "$PORT" -P /plaintext -o 5 "$@" >"$out" 2>&1; then
        cat "$out" >&2
        echo "h2spec $name: failures above" >&2
        exit 1
    fi
    echo "h2spec $name: $(tail -1 "$out")"
}

listening() {
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

start() {
    "$BIN" --addr "127.0.0.1:$PORT" --workers 1 "$@" >/dev/null 2>&1 &
    PID=$!
    listening "$PORT"
}

stop() {
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
}

start
run h2c
run h2c-strict -S
stop

usage=$("$BIN" --help 2>&1 || true)
if grep -q -- --tls-cert <<<"$usage"; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
    start --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem"
    run tls -t -k
    run tls-strict -t -k -S
    stop
fi

if [ -n "$PEREGRINE" ]; then
    "$BIN" --addr "127.0.0.1:$BACKEND_PORT" --workers 1 >/dev/null 2>&1 &
    BACKEND=$!
    listening "$BACKEND_PORT"
    proxy() {
        "$PEREGRINE" proxy --addr "127.0.0.1:$PORT" --to "http://127.0.0.1:$BACKEND_PORT" \
            --workers 1 --quiet --drain-grace 0 "$@" >/dev/null 2>&1 &
        PID=$!
        listening "$PORT"
    }
    proxy
    run proxy-h2c
    run proxy-h2c-strict -S
    stop
    if [ -f "$WORK/cert.pem" ]; then
        proxy --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem"
        run proxy-tls -t -k
        run proxy-tls-strict -t -k -S
        stop
    fi
fi
