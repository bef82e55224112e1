#!/usr/bin/env bash
# Runs every fuzz target in fuzz/fuzz_targets/ in turn for MINUTES each, one process at a time,
# with AddressSanitizer (cargo-fuzz's default) and debug assertions, then prints one line per
# target: the CPU seconds it got, executions, coverage (libFuzzer's final `cov` and `ft`),
# corpus size and crashes.
#
#   fuzz/run.sh MINUTES [TARGET...]     e.g. fuzz/run.sh 60 for the full campaign (a CPU-hour
#                                       per target, 18 hours for 18 targets)
#
# MINUTES is wall-clock time by default. With CPU=1 it is the CPU time the fuzzer itself gets
# (user + system, read from /proc every few seconds), so a niced run on a busy machine still
# ends with the CPU-hour it was asked for; the wall clock is then capped at WALL_CAP times
# MINUTES (default 8). libFuzzer is stopped with SIGINT, which prints its final statistics.
#
# Each target's working corpus (fuzz/corpus/TARGET, not committed) starts from the committed
# minimised seeds (fuzz/seeds/TARGET) and inputs shaped from the shared corpora (llhttp's
# HTTP/1.x cases, hpack-test-case; CORPORA, default ../shared/corpora beside the checkout) by
# fuzz/seed.py, and the inputs of the crashes found before (fuzz/regressions/TARGET, kept
# apart because cmin drops an input that adds no coverage: each runs as the corpus loads). After
# the run the corpus is minimised with `cargo fuzz cmin`; with KEEP=1 the minimised corpus
# replaces fuzz/seeds/TARGET (kept to a few MB in all).
# Do not pause a fuzzer (SIGSTOP) to free the CPU: libFuzzer's -timeout is wall-clock time, and
# on resuming it reports the input under way as a timeout; interrupt the run and start it again.
# A crash leaves its input in fuzz/artifacts/TARGET/ (once fixed, keep it in
# fuzz/regressions/TARGET/ beside its regression test); reproduce it with
# `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...`, minimise it with
# `cargo +nightly fuzz tmin TARGET ...`.
set -euo pipefail
cd "$(dirname "$0")"

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  echo "usage: fuzz/run.sh MINUTES [TARGET...]" >&2
  exit 2
fi
seconds=$(awk -v m="$1" 'BEGIN { printf "%d", m * 60 }')
shift
if [ $# -gt 0 ]; then targets=("$@"); else
  targets=(); for f in fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi
corpora=${CORPORA:-../../shared/corpora}
# Compile with one job by default (a shared machine); JOBS=N for more.
export CARGO_BUILD_JOBS=${JOBS:-1}
logs=target/run-logs
mkdir -p "$logs" corpus artifacts

# One build of every target first (so the timed runs are fuzzing, not compiling).
cargo +nightly fuzz build >/dev/null

# Seeds: the committed ones, then the shaped shared corpora (files named by content hash).
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  if [ -d "seeds/$t" ]; then cp -n "seeds/$t"/* "corpus/$t"/ 2>/dev/null || true; fi
  if [ -d "regressions/$t" ]; then cp -n "regressions/$t"/* "corpus/$t"/ 2>/dev/null || true; fi
done
if [ -d "$corpora" ]; then python3 seed.py "$corpora" corpus; else
  echo "note: no shared corpora at $corpora; starting from fuzz/seeds only" >&2
fi

# Waits until the fuzzer binary of target $1 has used $2 CPU seconds (utime + stime from
# /proc/PID/stat, in clock ticks), then interrupts it; returns when cargo ($3) has exited.
stop_at_cpu() {
  local t=$1 budget=$2 cargo_pid=$3 hz pid ticks
  hz=$(getconf CLK_TCK)
  while kill -0 "$cargo_pid" 2>/dev/null; do
    sleep 5
    pid=$(pgrep -nf "/release/$t( .*)? corpus/$t" || true)
    [ -n "$pid" ] || continue
    ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    if [ "$ticks" -ge $((budget * hz)) ]; then
      kill -INT "$pid" 2>/dev/null || true
      return
    fi
  done
}

results=()
for t in "${targets[@]}"; do
  log=$logs/$t.log
  before=$(find "artifacts/$t" -type f | wc -l)
  echo "== $t: ${seconds}s" >&2
  status=0
  # The CPU time the fuzzer got (user + system): on a shared machine a niced run gets less
  # than its wall-clock minutes, and the CPU-hour goal is CPU time.
  TIMEFORMAT='%U %S'
  if [ "${CPU:-0}" = 1 ]; then
    wall=$((seconds * ${WALL_CAP:-8}))
  else
    wall=$seconds
  fi
  { time {
    cargo +nightly fuzz run "$t" "corpus/$t" -- \
      -max_total_time="$wall" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
      >"$log" 2>&1 &
    fuzz_pid=$!
    if [ "${CPU:-0}" = 1 ]; then stop_at_cpu "$t" "$seconds" "$fuzz_pid"; fi
    wait "$fuzz_pid" || status=$?
  }; } 2>"$logs/$t.cpu"
  # The CPU budget was reached: libFuzzer exits 72 after SIGINT ("run interrupted"), which
  # cargo-fuzz reports as its own failure.
  if [ "${CPU:-0}" = 1 ] && grep -q 'libFuzzer: run interrupted; exiting' "$log"; then status=0; fi
  cpu=$(awk '{ printf "%d", $1 + $2 }' "$logs/$t.cpu")
  after=$(find "artifacts/$t" -type f | wc -l)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  crashes=$((after - before))
  if [ "$status" != 0 ] && [ "$crashes" = 0 ]; then crashes="exit $status"; fi
  # Minimise the working corpus in place (a crash input is not in it).
  cargo +nightly fuzz cmin "$t" "corpus/$t" >"$logs/$t.cmin.log" 2>&1 || true
  n=$(find "corpus/$t" -type f | wc -l)
  if [ "${KEEP:-0}" = 1 ]; then rm -rf "seeds/$t"; mkdir -p "seeds/$t"; cp "corpus/$t"/* "seeds/$t"/; fi
  line=$(printf '%-16s %5s min  cpu %5ss  execs %-12s cov %-6s ft %-7s corpus %-6s crashes %s' \
    "$t" "$(awk -v s="$seconds" 'BEGIN { print s / 60 }')" "$cpu" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$n" "$crashes")
  echo "$line" >&2
  results+=("$line")
done
printf '\n'
printf '%s\n' "${results[@]}"
