//! The endpoints the server answers itself, before any handler: health (readiness) for load
//! balancers, metrics for Prometheus, and the fixed answers set with
//! [`Server::fixed`](super::Server::fixed). Only `GET` and `HEAD` without a body are answered
//! here; anything else at those paths goes to the handler like any request.

use std::sync::Arc;

use http::StatusCode;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};

use super::fixed::Fixed;
use super::metrics::Metrics;
use super::shutdown::ShutdownSignal;
use crate::response::Response;

/// What the server answers itself, shared by the workers.
#[derive(Debug)]
pub(crate) struct Ops {
    pub(crate) health: Option<Box<str>>,
    pub(crate) metrics: Option<(Box<str>, Arc<Metrics>)>,
    /// More series appended to the metrics ([`Server::metrics_extra`](super::Server::metrics_extra)).
    pub(crate) metrics_extra: Option<super::MetricsExtra>,
    pub(crate) shutdown: Arc<ShutdownSignal>,
    /// Fixed answers, each for its own path (none of them health's or metrics').
    pub(crate) fixed: Vec<Fixed>,
    /// HTTP/1.1 may answer from `fixed`'s prepared bytes: there are some, and no request is
    /// logged or counted (those go through the general path, which logs and counts).
    pub(crate) fixed_h1: bool,
}

impl Ops {
    /// The response for a `GET` or `HEAD` without a body of `path`, if it is one of these
    /// endpoints.
    ///
    /// Health: `200 ok` while serving, `503 draining` from the moment a drain begins, so a
    /// balancer stops sending before the listeners close. Metrics: the counters, summed over
    /// the workers.
    ///
    /// A fixed answer: its response (see [`Fixed::response`]).
    pub(crate) fn answer(&self, path: &[u8]) -> Option<Response> {
        if let Some(fixed) = self.fixed.iter().find(|f| f.path().as_bytes() == path) {
            return Some(fixed.response());
        }
        let is_health = self.health.as_deref().is_some_and(|h| h.as_bytes() == path);
        let is_metrics = self.metrics.as_ref().is_some_and(|(m, _)| m.as_bytes() == path);
        if !is_health && !is_metrics {
            return None;
        }
        let draining = self.shutdown.is_triggered();
        let (status, body) = if is_health {
            match draining {
                false => (StatusCode::OK, "ok\n".to_owned()),
                true => (StatusCode::SERVICE_UNAVAILABLE, "draining\n".to_owned()),
            }
        } else {
            let (at, metrics) = self.metrics.as_ref()?;
            if at.as_bytes() != path {
                return None;
            }
            let mut text = metrics.render(draining);
            if let Some(extra) = &self.metrics_extra {
                text.push_str(&(extra.0)());
            }
            (StatusCode::OK, text)
        };
        let content_type = match is_health {
            true => "text/plain; charset=utf-8",
            // The Prometheus text format's media type.
            false => "text/plain; version=0.0.4; charset=utf-8",
        };
        Some(
            Response::with_status(status, body)
                .with_header(CONTENT_TYPE, HeaderValue::from_static(content_type))
                .with_header(CACHE_CONTROL, HeaderValue::from_static("no-store")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_turns_503_when_the_drain_begins() {
        let shutdown = Arc::new(ShutdownSignal::default());
        let ops = Ops {
            health: Some("/healthz".into()),
            metrics: Some(("/metrics".into(), Arc::new(Metrics::new(1)))),
            metrics_extra: None,
            shutdown: shutdown.clone(),
            fixed: Vec::new(),
            fixed_h1: false,
        };
        assert_eq!(ops.answer(b"/healthz").map(|r| r.status()), Some(StatusCode::OK));
        assert_eq!(ops.answer(b"/metrics").map(|r| r.status()), Some(StatusCode::OK));
        assert!(ops.answer(b"/healthz/").is_none());
        assert!(ops.answer(b"/").is_none());
        shutdown.trigger();
        let res = ops.answer(b"/healthz").unwrap();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers().get(&CACHE_CONTROL).map(|v| v.as_bytes()), Some(&b"no-store"[..]));
    }
}
