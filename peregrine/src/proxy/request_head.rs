//! The head of a request sent upstream: its target after the route's rewrite, and its
//! fields (those received minus the hop-by-hop ones and those this proxy writes itself, then
//! the route's and the forwarding fields), decided in one place for forwarded requests and
//! WebSocket openings alike.

use super::Shared;
use super::hop::{self, ConnectionOptions, Origin};
use super::route::Route;
use crate::request::Request;

/// Fields of a request head, on the stack: a head with more goes through a `Vec`.
const STACK_FIELDS: usize = 48;

/// Calls `f` with the target and the fields of the request to send upstream (on the stack
/// for up to [`STACK_FIELDS`]): the rewritten target, the fields received minus the hop-by-hop
/// ones and those this proxy writes, then the route's and the forwarding fields. The one
/// place that decides them, for requests and WebSocket openings alike.
pub(super) fn with_head<T>(
    shared: &Shared,
    route: &Route,
    req: &Request,
    scratch: &mut Vec<u8>,
    f: impl FnOnce(&str, &[(&str, &[u8])]) -> T,
) -> T {
    let received = req.headers();
    let origin = Origin {
        client: req.remote_addr(),
        secure: req.is_secure(),
        host: req.authority(),
        version: req.version(),
    };
    let added = shared.forwarding.added(&origin, || received.iter(), scratch);
    let target_start = scratch.len();
    route.target(req.path(), req.query(), scratch);
    let scratch: &[u8] = scratch;
    let target = std::str::from_utf8(&scratch[target_start..]).unwrap_or("/");
    // The asterisk form (OPTIONS *) is not a path to rewrite.
    let target = if req.target() == "*" { "*" } else { target };
    let options = ConnectionOptions::of(received.iter());
    let forwarding = &shared.forwarding;
    let ops = &route.request_headers;
    let kept = received.iter().filter(|(name, _)| {
        hop::forwards(name, &options) && !forwarding.replaces(name) && !ops.drops(name)
    });
    let value = |r: &Option<std::ops::Range<usize>>| r.clone().map(|r| &scratch[r]);
    let ours = [
        ("via", value(&added.via)),
        ("x-forwarded-for", value(&added.x_forwarded_for)),
        ("x-forwarded-proto", added.x_forwarded_proto),
        ("x-forwarded-host", value(&added.x_forwarded_host)),
        ("forwarded", value(&added.forwarded)),
    ];
    let ours = ours.into_iter().filter_map(|(n, v)| v.map(|v| (n, v)));
    // `te: trailers` is the one TE an intermediary passes on (RFC 9110 §10.1.4), to HTTP/2
    // (gRPC needs it) and HTTP/1.1 alike.
    let te = received
        .get_all("te")
        .any(|v| v.eq_ignore_ascii_case(b"trailers"))
        .then_some(("te", &b"trailers"[..]));
    let all = kept.chain(ops.added()).chain(ours).chain(te);
    let mut stack = [("", &[][..]); STACK_FIELDS];
    let mut n = 0;
    let mut spill: Vec<(&str, &[u8])> = Vec::new();
    for f in all {
        match stack.get_mut(n) {
            Some(slot) if spill.is_empty() => {
                *slot = f;
                n += 1;
            }
            _ => {
                if spill.is_empty() {
                    spill.extend_from_slice(&stack[..n]);
                }
                spill.push(f);
            }
        }
    }
    let fields = if spill.is_empty() { &stack[..n] } else { &spill[..] };
    f(target, fields)
}
