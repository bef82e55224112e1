//! One proxied exchange: the route found, the request checked and its head written to an
//! upstream connection (a kept-alive one of this worker's, or a new one), its body streamed
//! as the upstream takes it, the response head turned into the client's, and its body
//! streamed back ([`super::body`]). Failures before any byte of a response are retried on
//! another server when that is safe; what remains is answered 502 or 504 and logged.

// The futures a request awaits are async blocks, not `async fn`s: see `forward`.
#![allow(clippy::manual_async_fn)]

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use http::{HeaderName, HeaderValue, StatusCode};
use tokio::time::Instant;

use super::Shared;
use super::answer::{answer, failed};
use super::balance;
use super::body::Stream;
use super::field_array::FieldArray;
use super::hop::{self, ConnectionOptions};
use super::local::{Key, Leased, Local};
use super::route::{HostHeader, Route};
use super::translate;
use super::upstream::Pool;
use super::value_buffer::ValueBuffer;
use crate::Method;
use crate::body::Body;
use crate::client::Error;
use crate::client::conn::{Connection, Event, RequestId, ResponseHead};
use crate::request::Request;
use crate::response::Response;

/// Bytes of a response body read with its head when they are already there: a response whose
/// body ends within them frees its connection at once.
const EAGER: usize = 64 * 1024;
/// Response fields read onto the stack (more go on in a `Vec`).
const RESPONSE_FIELDS: usize = 32;

/// What went wrong with an attempt, and whether another may follow.
struct Failure {
    error: Error,
    /// Nothing of the request can have reached the server's application (no connection, or a
    /// pooled connection the server had closed), so even a request with a body can go again.
    unsent: bool,
}

/// Proxies `req` by `shared`'s routes.
///
/// Not an `async fn`: one keeps its arguments twice in its future (the argument and the
/// local it is moved into), and the request alone is 160 bytes; the block below captures them
/// once, so the future fits the worker's pooled buffer.
pub(crate) fn forward(
    shared: Arc<Shared>,
    local: Arc<Local>,
    mut req: Request,
) -> impl Future<Output = Response> {
    async move {
        let host = req.authority().map(super::route::host_only);
        let Some(index) = shared.route(host, req.path()) else {
            return answer(StatusCode::NOT_FOUND, "no route for this request");
        };
        let (route, pool) = (&shared.routes[index].0, &shared.routes[index].1);
        let Some(pool) = pool else {
            return files(route, &req);
        };
        // Before the checks of a request to forward: over HTTP/2 a WebSocket opens with CONNECT.
        // Boxed: a WebSocket's relay is several KiB of state, kept out of every request's future.
        if super::websocket::is_websocket(&req) {
            return Box::pin(super::websocket::relay(&shared, &local, pool, route, req)).await;
        }
        if let Err(refusal) = translate::check(&req, req.target()) {
            return answer(refusal.status(), refusal.reason());
        }
        let mut body = Some(req.take_body());
        let length = body.as_ref().and_then(Body::size_hint);
        if let (Some(limit), Some(len)) = (route.max_body_bytes, length) {
            if len > limit {
                return answer(StatusCode::PAYLOAD_TOO_LARGE, "request body larger than the limit");
            }
        }
        let method = req.method();
        let replayable = method.is_idempotent() && length == Some(0);
        let key = match &pool.balance {
            balance::Balance::Hash(k) => {
                let headers = req.headers();
                let cookies = headers.get_all("cookie");
                let header = |n: &str| headers.get(n);
                balance::request_key(k, header, cookies, req.remote_addr().map(|a| a.ip()))
            }
            _ => None,
        };
        pool.budget.deposit();
        let mut tried = 0u64;
        let mut attempts = 0u32;
        let total = pool.timeouts.total.map(|d| Instant::now() + d);
        loop {
            let server = {
                let mut rng = local.rng.lock().unwrap_or_else(|e| e.into_inner());
                pool.pick(key, tried, &mut rng)
            };
            let Some(server) = server else {
                return answer(StatusCode::SERVICE_UNAVAILABLE, "no upstream server is available");
            };
            tried |= 1u64.checked_shl(server as u32).unwrap_or(0);
            let s = &pool.servers[server];
            s.requests.fetch_add(1, Ordering::Relaxed);
            s.in_flight.fetch_add(1, Ordering::Relaxed);
            let started = std::time::Instant::now();
            let outcome =
                exchange(&shared, &local, pool, route, server, &req, &mut body, total).await;
            match outcome {
                Ok(response) => {
                    crate::server::note_upstream(&s.name, started.elapsed());
                    return response;
                }
                Err(failure) => {
                    s.in_flight.fetch_sub(1, Ordering::Relaxed);
                    pool.failed(server);
                    let again = attempts < pool.retries.attempts
                        && (failure.unsent || replayable)
                        && body.is_some()
                        && total.is_none_or(|t| Instant::now() < t)
                        && pool.budget.withdraw();
                    tracing::warn!(
                        upstream = %s.name,
                        method = req.method_str(),
                        target = req.target(),
                        retry = again,
                        "proxy: {}", failure.error
                    );
                    if !again {
                        crate::server::note_upstream(&s.name, started.elapsed());
                        return failed(&failure.error);
                    }
                    attempts += 1;
                }
            }
        }
    }
}

/// The answer of a route to files: the path after the rewrite, as `ServeDir` answers it.
fn files(route: &Route, req: &Request) -> Response {
    let super::route::Target::Files(dir) = &route.target else {
        return answer(StatusCode::INTERNAL_SERVER_ERROR, "a route without a target");
    };
    SCRATCH.with(|s| {
        let mut path = s.borrow_mut();
        path.clear();
        route.target(req.path(), None, &mut path);
        dir.serve_path(req, &path)
    })
}

/// One attempt on `server`: a connection, the request, the response head, all within the
/// request's total deadline when it has one, the head also within the response-head timeout.
/// One timer at a time: each phase's timer overlaps the others' in the future's state, where
/// a timeout around the whole attempt would add a second (112 bytes) to every request's. The
/// wait for the head is bounded by the upstream connection's own timer (`expect_head_by`),
/// which it keeps for its read timeout anyway: a tokio timer per request cost ~550
/// instructions (callgrind).
#[allow(clippy::too_many_arguments)]
fn exchange(
    shared: &Shared,
    local: &Arc<Local>,
    pool: &Arc<Pool>,
    route: &Route,
    server: usize,
    req: &Request,
    body: &mut Option<Body>,
    total: Option<Instant>,
) -> impl Future<Output = Result<Response, Failure>> {
    async move {
        let authority: Option<&[u8]> = match &route.host_header {
            HostHeader::Keep => req.authority().map(str::as_bytes),
            HostHeader::Upstream => None,
            HostHeader::Set(v) => Some(v.as_bytes()),
        };
        let idle = local.checkout(&Key { pool: pool.id, server, authority });
        let start = start(shared, pool, route, server, authority, req, body, idle);
        let (mut leased, id) = match total {
            Some(at) => match tokio::time::timeout_at(at, start).await {
                Ok(r) => r?,
                Err(_) => return Err(timed_out(TOTAL)),
            },
            None => start.await?,
        };
        // The response head, within its timeout (the connection's idle timeout applies too),
        // counted from the request written: a request without a body was written when it was
        // queued (the connection read the clock then), one with a body once the body was.
        let written = match body {
            Some(_) => leased.conn.sent_at(),
            None => std::time::Instant::now(),
        };
        let head_at = Instant::from_std(written) + pool.timeouts.response_head;
        let (at, why) = match total {
            Some(t) if t < head_at => (t, TOTAL),
            _ => (head_at, "no response head within the response-head timeout"),
        };
        leased.conn.expect_head_by(Some((at, why)));
        head(leased, id, req.method(), route, local, pool).await
    }
}

const TOTAL: &str = "no response within the total timeout";

fn timed_out(why: &'static str) -> Failure {
    let deadline = crate::client::error::Deadline::Request;
    Failure { error: Error::new(crate::client::error::Kind::Timeout(deadline), why), unsent: false }
}

/// A connection (`idle`, or a new one) with the request sent on it.
#[allow(clippy::too_many_arguments)]
fn start(
    shared: &Shared,
    pool: &Pool,
    route: &Route,
    server: usize,
    authority: Option<&[u8]>,
    req: &Request,
    body: &mut Option<Body>,
    idle: Option<Leased>,
) -> impl Future<Output = Result<(Leased, RequestId), Failure>> {
    async move {
        let mut leased = match idle {
            Some(leased) => leased,
            // Boxed: connecting (TCP, TLS) is per connection, and its state would otherwise
            // weigh on every request's future.
            None => Box::pin(connect(pool, server, authority)).await?,
        };
        // A pooled connection the server closed as the request went out fails unprocessed: once,
        // on a new connection, for a request that can be sent again.
        let sent = match send(shared, route, req, &mut leased.conn, body).await {
            Err(f) if f.error.is_unprocessed() && body.is_some() => {
                leased = Box::pin(connect(pool, server, authority)).await?;
                send(shared, route, req, &mut leased.conn, body).await
            }
            other => other,
        };
        Ok((leased, sent?))
    }
}

/// A new connection to `server`.
async fn connect(pool: &Pool, server: usize, authority: Option<&[u8]>) -> Result<Leased, Failure> {
    let origin = &pool.servers[server].origin;
    let conn = match authority {
        Some(a) => Connection::connect_with_authority(origin, a, &pool.config).await,
        None => Connection::connect_origin(origin, &pool.config).await,
    };
    let conn = conn.map_err(|error| Failure { error, unsent: true })?;
    Ok(Leased { pool: pool.id, server, authority: authority.map(Box::from), conn: Box::new(conn) })
}

/// Writes the request head, then streams the body (taken from `body` once it started).
fn send(
    shared: &Shared,
    route: &Route,
    req: &Request,
    conn: &mut Connection,
    body: &mut Option<Body>,
) -> impl Future<Output = Result<RequestId, Failure>> {
    async move {
        let length = body.as_ref().and_then(Body::size_hint);
        let id = SCRATCH.with(|s| {
            let mut scratch = s.borrow_mut();
            write_head(shared, route, req, conn, length, &mut scratch)
        })?;
        if length == Some(0) {
            conn.flush()
                .await
                .map_err(|error| Failure { unsent: error.is_unprocessed(), error })?;
            return Ok(id);
        }
        // From here the body is consumed: no retry.
        let Some(mut body) = body.take() else {
            return Err(Failure {
                error: request_error("the request body was already sent"),
                unsent: false,
            });
        };
        let limit = route.max_body_bytes;
        let mut sent = 0u64;
        loop {
            // The chunk is matched out of the awaited value before its write is awaited:
            // matching in place would keep the whole value in the future's state too.
            let chunk = match body.chunk().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => {
                    conn.cancel(id);
                    return Err(Failure {
                        error: Error::with_source(
                            crate::client::error::Kind::Body,
                            "the client's request body failed",
                            e,
                        ),
                        unsent: false,
                    });
                }
                None => {
                    let done = match body.take_trailers() {
                        Some(trailers) => {
                            let fields: Vec<(&str, &[u8])> =
                                trailers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
                            conn.send_trailers(id, &fields)
                        }
                        None => conn.send_data(id, &[], true).map(|_| ()),
                    };
                    done.map_err(|error| Failure { error, unsent: false })?;
                    conn.flush().await.map_err(|error| Failure { error, unsent: false })?;
                    return Ok(id);
                }
            };
            sent += chunk.len() as u64;
            if limit.is_some_and(|l| sent > l) {
                conn.cancel(id);
                return Err(Failure {
                    error: request_error("request body larger than the limit"),
                    unsent: false,
                });
            }
            write_all(conn, id, &chunk).await?;
        }
    }
}

fn request_error(what: &'static str) -> Error {
    Error::new(crate::client::error::Kind::Request, what)
}

/// Sends `data` as the connection takes it: all at once over HTTP/1.1 (then written out before
/// the next chunk is read from the client), as the flow-control windows allow over HTTP/2.
async fn write_all(conn: &mut Connection, id: RequestId, mut data: &[u8]) -> Result<(), Failure> {
    let fail = |error| Failure { error, unsent: false };
    loop {
        let n = conn.send_data(id, data, false).map_err(fail)?;
        data = &data[n..];
        conn.flush().await.map_err(fail)?;
        if data.is_empty() {
            return Ok(());
        }
        // HTTP/2 with no window left: wait for the server to open it.
        loop {
            match conn.next_event().await.map_err(fail)? {
                Event::Writable { id: w } if w == id => break,
                Event::Failed { error, .. } => return Err(fail(error)),
                Event::Head { .. } | Event::Data { .. } | Event::End { .. } => {
                    return Err(fail(Error::new(
                        crate::client::error::Kind::Protocol,
                        "the upstream answered before the request body was sent",
                    )));
                }
                Event::Writable { .. } => {}
            }
        }
    }
}

thread_local! {
    /// The worker's buffer for a request's rewritten target and forwarding values.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The worker's buffers for response field values and the body bytes read with a head.
    static VALUES: std::cell::RefCell<ValueBuffer> = std::cell::RefCell::new(ValueBuffer::new());
}

/// Encodes the request head into the connection: the rewritten target, the fields received
/// minus the hop-by-hop ones and those this proxy writes, then the route's and the forwarding
/// fields.
fn write_head(
    shared: &Shared,
    route: &Route,
    req: &Request,
    conn: &mut Connection,
    length: Option<u64>,
    scratch: &mut Vec<u8>,
) -> Result<RequestId, Failure> {
    let http2 = conn.protocol() == crate::client::conn::Protocol::Http2;
    super::request_head::with_head(shared, route, req, Some(http2), scratch, |target, fields| {
        conn.send_request_streaming(req.method_str(), target, fields, length)
            .map_err(|error| Failure { error, unsent: false })
    })
}

/// Waits for the response head and turns it into the client's response.
fn head(
    mut leased: Leased,
    id: RequestId,
    method: Method,
    route: &Route,
    local: &Arc<Local>,
    pool: &Arc<Pool>,
) -> impl Future<Output = Result<Response, Failure>> {
    async move {
        let fail = |error| Failure { error, unsent: false };
        let (mut response, length) = loop {
            match leased.conn.next_event().await.map_err(fail)? {
                Event::Head { head, .. } => break response_head(&head, route),
                Event::Failed { error, .. } => return Err(fail(error)),
                _ => {}
            }
        };
        // The head came: the body's waits have the connection's read timeout alone.
        leased.conn.expect_head_by(None);
        let status = response.status();
        // RFC 9110 §9.3.2, §15.3.5, §15.4.5: no content follows these, whatever the length says.
        let bodiless = method == Method::Head
            || status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED;
        // Take what is already there: a response that is complete frees its connection now.
        // Into the worker's shared buffer (see `VALUES`): no allocation per response.
        let (first, ended) = VALUES.with(|values| {
            let mut values = values.borrow_mut();
            let buf = values.start(length.map_or(0, |n| n.min(EAGER as u64) as usize));
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let mut ended = None;
            loop {
                match leased.conn.poll_event(&mut cx) {
                    Poll::Pending => break,
                    Poll::Ready(Ok(Event::Data { data, .. })) => {
                        buf.extend_from_slice(data);
                        if buf.len() >= EAGER {
                            break;
                        }
                    }
                    Poll::Ready(Ok(Event::End { trailers, .. })) => {
                        ended = Some(trailers);
                        break;
                    }
                    // The head was good: the body fails when it is read.
                    Poll::Ready(Ok(Event::Failed { .. })) | Poll::Ready(Err(_)) => break,
                    Poll::Ready(Ok(_)) => {}
                }
            }
            (values.split(), ended)
        });
        let server = leased.server;
        let body = match ended {
            Some(trailers) => {
                pool.servers[server].in_flight.fetch_sub(1, Ordering::Relaxed);
                pool.succeeded(server);
                local.checkin(leased, pool.max_idle, pool.timeouts.pool_idle);
                let body = if bodiless {
                    match (method, length) {
                        (Method::Head, Some(n)) => {
                            Body::from_poll_fn_sized(n, |_| Poll::Ready(None))
                        }
                        _ => Body::empty(),
                    }
                } else {
                    Body::from(first)
                };
                match trailers {
                    Some(t) if !t.is_empty() => body.with_trailers(t),
                    _ => body,
                }
            }
            None => {
                pool.succeeded(server);
                let stream = Stream::new(leased, id, first, length, local.clone(), pool.clone());
                Body::incoming(Arc::new(stream), 0)
            }
        };
        *response.body_mut() = body;
        Ok(response)
    }
}

/// The client's response head from the upstream's: the status, and the fields minus the
/// hop-by-hop ones and the framing (the server writes its own), with the route's changes.
/// Returns the Content-Length the upstream sent, if any.
fn response_head(head: &ResponseHead<'_>, route: &Route) -> (Response, Option<u64>) {
    let status = StatusCode::from_u16(head.status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = Response::with_status(status, Body::empty());
    // Read once: the `Connection` options must be known before any field is judged, and each
    // further look would read the head again.
    let mut fields = FieldArray::<RESPONSE_FIELDS>::new();
    fields.extend(head.headers().iter());
    let options = ConnectionOptions::of(fields.as_slice().iter().copied());
    let ops = &route.response_headers;
    let mut length = None;
    let mut total = 0;
    fields.retain(|&(name, value)| {
        if name.len() == 14 && name.eq_ignore_ascii_case("content-length") {
            // The first: the client's parser refused a response whose lengths disagree.
            length = length.or(Some(value));
            return false;
        }
        let keep = hop::forwards(name, &options) && !ops.drops(name);
        total += if keep { value.len() } else { 0 };
        keep
    });
    let kept = || fields.as_slice().iter();
    // The values share one buffer, split off as shared `Bytes`: no copy per field, and no
    // allocation per response (see `ValueBuffer`).
    let values = VALUES.with(|values| {
        let mut values = values.borrow_mut();
        let buf = values.start(total);
        for (_, v) in kept() {
            buf.extend_from_slice(v);
        }
        values.split()
    });
    let headers = response.headers_mut();
    let mut at = 0;
    for (name, v) in kept() {
        let value = values.slice(at..at + v.len());
        at += v.len();
        let name = HeaderName::from_bytes(name.as_bytes());
        if let (Ok(n), Ok(v)) = (name, HeaderValue::from_maybe_shared(value)) {
            headers.append(n, v);
        }
    }
    for (n, v) in ops.set.iter().chain(&ops.add) {
        headers.append(n.clone(), v.clone());
    }
    (response, length.and_then(crate::http1::framing::parse_content_length))
}
