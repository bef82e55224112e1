//! The head of a request sent upstream: its target after the route's rewrite, and its
//! fields (those received minus the hop-by-hop ones and those this proxy writes itself, then
//! the route's and the forwarding fields), decided in one place for forwarded requests and
//! WebSocket openings alike.

use super::Shared;
use super::field_array::FieldArray;
use super::hop::{self, ConnectionOptions, Origin};
use super::route::Route;
use crate::request::Request;

/// Calls `f` with the target and the fields of the request to send upstream (on the stack
/// for up to [`STACK_FIELDS`](super::field_array::STACK_FIELDS)): the rewritten target, the fields received minus the hop-by-hop
/// ones and those this proxy writes, then the route's and the forwarding fields. The one
/// place that decides them, for requests and WebSocket openings alike. `trailers_to` is the
/// upstream's protocol (`Some(true)` for HTTP/2) when the request may ask it for trailers.
pub(super) fn with_head<T>(
    shared: &Shared,
    route: &Route,
    req: &Request,
    trailers_to: Option<bool>,
    scratch: &mut Vec<u8>,
    f: impl FnOnce(&str, &[(&str, &[u8])]) -> T,
) -> T {
    // Read once: each look below would otherwise scan the request's lines again.
    let mut received: FieldArray = FieldArray::new();
    received.extend(req.headers().iter());
    let received = received.as_slice();
    let origin = Origin {
        client: req.remote_addr(),
        secure: req.is_secure(),
        host: req.authority(),
        version: req.version(),
    };
    let added = shared.forwarding.added(&origin, || received.iter().copied(), scratch);
    let target_start = scratch.len();
    route.target(req.path(), req.query(), scratch);
    let scratch: &[u8] = scratch;
    let target = std::str::from_utf8(&scratch[target_start..]).unwrap_or("/");
    // The asterisk form (OPTIONS *) is not a path to rewrite.
    let target = if req.target() == "*" { "*" } else { target };
    let options = ConnectionOptions::of(received.iter().copied());
    let forwarding = &shared.forwarding;
    let ops = &route.request_headers;
    let kept = received.iter().copied().filter(|(name, _)| {
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
    // RFC 9110 §10.1.4: TE is the client's hop's; a client that asked for trailers there gets
    // them asked for on the proxy's hop (gRPC over HTTP/2 needs `te: trailers`).
    let te_values = received.iter().filter(|(n, _)| n.eq_ignore_ascii_case("te")).map(|(_, v)| *v);
    let te = match trailers_to {
        Some(http2) if hop::asks_for_trailers(req.version(), te_values, &options) => {
            hop::trailers_asked(http2)
        }
        _ => &[],
    };
    let all = kept.chain(ops.added()).chain(ours).chain(te.iter().copied());
    let mut fields: FieldArray = FieldArray::new();
    fields.extend(all);
    let fields = fields.as_slice();
    f(target, fields)
}
