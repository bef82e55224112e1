//! Counters an operator or load balancer reads, in the Prometheus text format.
//!
//! Each worker writes only its own counters, on its own cache lines, with plain loads and
//! stores (a relaxed atomic store of a value read by the same thread compiles to an ordinary
//! `mov`; no locked instruction, no line shared between cores on the request path). A scrape
//! reads every worker's counters and sums them; a value read mid-update is at most one
//! request old.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One worker's counters: written by that worker only.
#[derive(Debug, Default)]
#[repr(align(128))] // Its own cache lines (two, as adjacent-line prefetch pairs them).
pub(crate) struct WorkerMetrics {
    connections_open: AtomicU64,
    connections_total: AtomicU64,
    in_flight: AtomicU64,
    /// Responses by status class: 1xx to 5xx (a code of 600 or more counts as 5xx).
    responses: [AtomicU64; 5],
    body_bytes: AtomicU64,
}

/// Adds `n` (wrapping) to a counter only this thread writes.
#[inline]
fn add(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl WorkerMetrics {
    /// A connection was admitted; `open` are open on this worker now.
    pub(crate) fn connection_opened(&self, open: usize) {
        add(&self.connections_total, 1);
        self.connections_open.store(open as u64, Ordering::Relaxed);
    }

    /// A connection closed; `open` are left on this worker.
    pub(crate) fn connection_closed(&self, open: usize) {
        self.connections_open.store(open as u64, Ordering::Relaxed);
    }

    /// A handler started.
    #[inline]
    pub(crate) fn request_started(&self) {
        add(&self.in_flight, 1);
    }

    /// A handler returned (or panicked, or its body timed out).
    #[inline]
    pub(crate) fn request_finished(&self) {
        add(&self.in_flight, u64::MAX);
    }

    /// A response with `status` was encoded, with `body_bytes` of content so far.
    #[inline]
    pub(crate) fn response(&self, status: u16, body_bytes: u64) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        add(&self.responses[class], 1);
        add(&self.body_bytes, body_bytes);
    }

    /// More content bytes of a streamed response went out.
    pub(crate) fn body_bytes(&self, n: u64) {
        add(&self.body_bytes, n);
    }
}

/// Every worker's counters, for the scrape.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    workers: Vec<Arc<WorkerMetrics>>,
}

impl Metrics {
    /// Counters for `n` workers.
    pub(crate) fn new(n: usize) -> Metrics {
        Metrics { workers: (0..n).map(|_| Arc::default()).collect() }
    }

    /// Worker `index`'s counters.
    pub(crate) fn worker(&self, index: usize) -> Option<Arc<WorkerMetrics>> {
        self.workers.get(index).cloned()
    }

    /// The sum of one counter over the workers.
    fn sum(&self, counter: impl Fn(&WorkerMetrics) -> &AtomicU64) -> u64 {
        self.workers.iter().fold(0u64, |n, w| n.wrapping_add(counter(w).load(Ordering::Relaxed)))
    }

    /// The counters in the Prometheus text exposition format (version 0.0.4).
    pub(crate) fn render(&self, draining: bool) -> String {
        let mut out = String::with_capacity(1024);
        let mut metric = |name: &str, kind: &str, help: &str, values: &[(&str, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in values {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        metric(
            "peregrine_connections_open",
            "gauge",
            "Connections open now.",
            &[("", self.sum(|w| &w.connections_open))],
        );
        metric(
            "peregrine_connections_total",
            "counter",
            "Connections accepted and admitted.",
            &[("", self.sum(|w| &w.connections_total))],
        );
        // Per worker never below zero: a request starts and finishes on one worker.
        metric(
            "peregrine_requests_in_flight",
            "gauge",
            "Requests whose handler is running.",
            &[("", self.sum(|w| &w.in_flight))],
        );
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"].map(|c| format!("{{class=\"{c}\"}}"));
        let by_class: Vec<(&str, u64)> =
            (0..5).map(|i| (classes[i].as_str(), self.sum(|w| &w.responses[i]))).collect();
        metric(
            "peregrine_requests_total",
            "counter",
            "Requests answered, by status class of the response (refused requests included).",
            &by_class,
        );
        metric(
            "peregrine_response_body_bytes_total",
            "counter",
            "Content bytes of the responses sent (heads not counted).",
            &[("", self.sum(|w| &w.body_bytes))],
        );
        metric(
            "peregrine_draining",
            "gauge",
            "1 once a drain (graceful shutdown) has begun.",
            &[("", u64::from(draining))],
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_workers() {
        let metrics = Metrics::new(2);
        let (a, b) = (metrics.worker(0).unwrap(), metrics.worker(1).unwrap());
        a.connection_opened(1);
        b.connection_opened(1);
        b.connection_opened(2);
        b.connection_closed(1);
        a.request_started();
        a.request_started();
        a.request_finished();
        for (status, bytes) in [(200, 13), (204, 0), (404, 9), (101, 0), (503, 5), (999, 0)] {
            b.response(status, bytes);
        }
        a.body_bytes(100);
        let text = metrics.render(true);
        for line in [
            "peregrine_connections_open 2",
            "peregrine_connections_total 3",
            "peregrine_requests_in_flight 1",
            "peregrine_requests_total{class=\"1xx\"} 1",
            "peregrine_requests_total{class=\"2xx\"} 2",
            "peregrine_requests_total{class=\"3xx\"} 0",
            "peregrine_requests_total{class=\"4xx\"} 1",
            "peregrine_requests_total{class=\"5xx\"} 2",
            "peregrine_response_body_bytes_total 127",
            "peregrine_draining 1",
            "# TYPE peregrine_requests_total counter",
            "# TYPE peregrine_connections_open gauge",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with('\n'));
    }
}
