//! Thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) as a criterion measurement, shared by the
//! benches (`mod cpu_time;`). Time the thread spends descheduled on a shared machine is not
//! counted (BENCHMARKING.md).
#![allow(unsafe_code)]
// Each bench includes this file and uses the parts it needs.
#![allow(dead_code)]

use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};

/// Criterion measurement reading the calling thread's CPU time, in nanoseconds.
pub struct CpuTime;

/// The calling thread's CPU time in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is a clock Linux
    // supports, and the return value is checked.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
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
        &NsFormatter
    }
}

/// Formats nanosecond values and per-CPU-second throughputs.
pub struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e3, "µs"),
            t if t < 1e9 => (1e6, "ms"),
            _ => (1e9, "s"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }
    fn scale_throughputs(&self, _typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let (n, unit) = match t {
            Throughput::Elements(n) => (*n as f64, "Melem/s"),
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (*n as f64, "MB/s"),
            _ => (1.0, "M/s"),
        };
        // Values are CPU ns per iteration: n per iteration / ns = G per second; report millions.
        values.iter_mut().for_each(|v| *v = n / *v * 1e3);
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
