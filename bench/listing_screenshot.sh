#!/usr/bin/env bash
# Screenshots of the directory listing in a real browser (headless Chromium), light and dark.
#
# Serves a small sample tree (files of several sizes and dates, a subdirectory, a name with
# HTML characters, a name that is not UTF-8) with `peregrine serve` on 127.0.0.1, and writes
# listing-light.png and listing-dark.png (dark via --force-dark-mode, which sets
# prefers-color-scheme: dark) into OUT. Look at them; they are not committed.
#
# Usage: bench/listing_screenshot.sh [OUT]   (default OUT: a new directory under /tmp)
# Env:   PEREGRINE=<binary> (default target/release/peregrine, built if missing)
#        PORT=18090  WIDTH=1000  HEIGHT=700
# Needs Debian's chromium (apt-get install -y chromium); installs it when missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$(mktemp -d /tmp/peregrine-listing-shots.XXXXXX)}
PORT=${PORT:-18090}
WIDTH=${WIDTH:-1000}
HEIGHT=${HEIGHT:-700}
PEREGRINE=${PEREGRINE:-$ROOT/target/release/peregrine}
mkdir -p "$OUT"

if ! command -v chromium >/dev/null; then
    apt-get update && apt-get install -y chromium
fi
if [ ! -x "$PEREGRINE" ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli)
fi

WORK=$(mktemp -d /tmp/peregrine-listing-www.XXXXXX)
WWW=$WORK/www
mkdir -p "$WWW/assets/img" "$WWW/docs"
head -c 612 /dev/urandom > "$WWW/index.bak"
head -c 48213 /dev/urandom > "$WWW/assets/app.js"
head -c 3145728 /dev/urandom > "$WWW/video-preview.mp4"
head -c 1536 /dev/urandom > "$WWW/notes.md"
printf 'hello\n' > "$WWW/hello.txt"
printf 'x' > "$WWW/<em>not italic & \"quoted\".txt"
printf 'latin-1' > "$WWW/$(printf 'caf\xe9.txt')"
touch -d '2024-02-29 13:37' "$WWW/notes.md"
touch -d '2025-07-01 08:00' "$WWW/video-preview.mp4"
touch -d '2023-12-24 18:00' "$WWW/docs"

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

"$PEREGRINE" serve "$WWW" --addr "127.0.0.1:$PORT" --workers 1 --quiet > "$WORK/out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -qs Serving "$WORK/out" && break; sleep 0.1; done
grep -q Serving "$WORK/out" || { cat "$WORK/out" >&2; exit 1; }

shot() {
    local name=$1; shift
    # A fresh profile per run; no network but the loopback server.
    local profile
    profile=$(mktemp -d "$WORK/profile.XXXXXX")
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size="$WIDTH,$HEIGHT" \
        "$@" --screenshot="$OUT/$name" "http://127.0.0.1:$PORT/" >/dev/null 2>&1
    [ -s "$OUT/$name" ] || { echo "no screenshot $name" >&2; exit 1; }
    echo "$OUT/$name"
}
shot listing-light.png
shot listing-dark.png --force-dark-mode
