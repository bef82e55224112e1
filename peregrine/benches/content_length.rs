//! Content-Length parsing: peregrine's SWAR hand parser against the idiomatic std call
//! (`str::from_utf8` + `u64::from_str`), on 64K-value sets (BENCHMARKING.md: smaller sets get
//! memorised by the branch predictor), timed in thread CPU time.
//!
//! Run: `cargo bench -p peregrine --bench content_length -- --measurement-time 2`

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput};
use peregrine::http1::framing::parse_content_length;

/// Thread CPU time (`CLOCK_THREAD_CPUTIME_ID`): excludes time the thread was descheduled.
struct ThreadCpu;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

static WALL: WallTime = WallTime;

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}

/// 65,536 values packed in one buffer, with (start, len) spans.
struct Set {
    name: &'static str,
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

fn set(name: &'static str, mut next: impl FnMut() -> u64) -> Set {
    let (mut buf, mut spans) = (Vec::new(), Vec::new());
    for _ in 0..65_536 {
        let s = next().to_string();
        spans.push((buf.len(), s.len()));
        buf.extend_from_slice(s.as_bytes());
    }
    Set { name, buf, spans }
}

fn sets() -> Vec<Set> {
    // xorshift64*: deterministic inputs without a rand dependency.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut r2 = rnd;
    vec![
        // Random length 1..=4 digits, then a random value of that length.
        set("1-4 digits", || {
            let len = rnd() % 4;
            let lo = [0, 10, 100, 1000][len as usize];
            lo + rnd() % (lo * 9).max(10)
        }),
        // Random 19-digit values.
        set("19 digits", || 1_000_000_000_000_000_000 + r2() % 8_999_999_999_999_999_999),
    ]
}

fn std_parse(v: &[u8]) -> Option<u64> {
    std::str::from_utf8(v).ok()?.parse::<u64>().ok()
}

/// The loop alone: what every row pays before parsing.
fn harness(v: &[u8]) -> Option<u64> {
    Some(v.len() as u64)
}

/// Sums every value of the set; generic so each parser is inlined into its own loop, as it is
/// at a real call site.
fn run_set(set: &Set, f: impl Fn(&[u8]) -> Option<u64>) -> u64 {
    let mut sum = 0u64;
    for &(start, len) in &set.spans {
        sum = sum.wrapping_add(f(black_box(&set.buf[start..start + len])).unwrap_or(0));
    }
    sum
}

fn bench(c: &mut Criterion<ThreadCpu>, sets: &[Set]) {
    for set in sets {
        let mut g = c.benchmark_group(format!("content_length/{}", set.name));
        g.throughput(Throughput::Elements(set.spans.len() as u64));
        g.bench_function("peregrine", |b| b.iter(|| black_box(run_set(set, parse_content_length))));
        g.bench_function("std", |b| b.iter(|| black_box(run_set(set, std_parse))));
        g.bench_function("harness", |b| b.iter(|| black_box(run_set(set, harness))));
        g.finish();
    }
}

/// Median thread-CPU ns per value over 101 passes, for the summary lines.
fn median_ns(set: &Set, f: impl Fn(&[u8]) -> Option<u64> + Copy) -> f64 {
    let mut t: Vec<u64> = (0..101)
        .map(|_| {
            let s = thread_cpu_ns();
            black_box(run_set(set, f));
            thread_cpu_ns() - s
        })
        .collect();
    t.sort_unstable();
    t[t.len() / 2] as f64 / set.spans.len() as f64
}

fn main() {
    let sets = sets();
    for set in &sets {
        let want = run_set(set, std_parse);
        assert_eq!(run_set(set, parse_content_length), want, "disagree on {}", set.name);
    }
    let mut c = Criterion::default()
        .with_measurement(ThreadCpu)
        .warm_up_time(Duration::from_millis(500))
        .configure_from_args();
    bench(&mut c, &sets);
    c.final_summary();
    for set in &sets {
        let ours = median_ns(set, parse_content_length);
        let std = median_ns(set, std_parse);
        let base = median_ns(set, harness);
        println!(
            "summary content_length/{}: peregrine {ours:.2} ns/value, std {std:.2} ns/value, \
             {:.2}x faster (loop alone {base:.2} ns/value)",
            set.name,
            std / ours
        );
    }
}
