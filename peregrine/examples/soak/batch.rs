//! The multiplexed clients' loop (HTTP/2 and HTTP/3): a few requests at once on one
//! connection, paced; those the server did not process (its GOAWAY's refusal) sent again on a
//! new connection; each response verified.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use crate::ctx::{Ctx, Good, Rng, pacer};
use crate::h1::{Expect, Resp, verify};
use crate::site::pick;

/// The connections a batch may take before its unprocessed requests count as failed.
const ROUNDS: usize = 4;

/// What one request of a batch came to.
pub enum Outcome {
    Answered(Resp),
    /// Not processed by the server (RFC 9113 §6.8, RFC 9114 §5.2): sent again on a new
    /// connection.
    Unprocessed,
    /// After SIGTERM, a connection reset without a byte from the server (the kernel completed
    /// it as the listener closed): as a refused connection, the client's end.
    Ended,
    /// Failed; the connection is given up.
    Failed(String),
}

/// `streams` requests at once, `per_s` times a second, until the good clients stop: on the
/// connection `connect` opens (again after a failure or a refusal), each request by `fetch`
/// with the connection and the file's name. A failed `connect` during the drain is the
/// client's end.
pub async fn run<C, Open, OpenFut, Fetch, Fut>(
    ctx: &Arc<Ctx>,
    class: Good,
    seed: u64,
    per_s: f64,
    streams: usize,
    mut connect: Open,
    fetch: Fetch,
) where
    C: Clone,
    Open: FnMut() -> OpenFut,
    OpenFut: Future<Output = Result<C, String>>,
    Fetch: Fn(C, &'static str) -> Fut,
    Fut: Future<Output = Outcome>,
{
    let mut rng = Rng::new(seed);
    let mut pace = pacer(per_s);
    let mut conn: Option<C> = None;
    while !ctx.good_stopped() {
        pace.tick().await;
        let mut todo: Vec<&'static str> = (0..streams).map(|_| pick(&mut rng)).collect();
        let started = Instant::now();
        let mut rounds = 0;
        while !todo.is_empty() && rounds < ROUNDS {
            rounds += 1;
            let c = match &conn {
                Some(c) => c.clone(),
                None => match connect().await {
                    Ok(c) => conn.insert(c).clone(),
                    Err(_) if ctx.draining() => return,
                    Err(e) => {
                        ctx.fail(class, e);
                        break;
                    }
                },
            };
            let outcomes =
                futures_util::future::join_all(todo.iter().map(|name| fetch(c.clone(), name)))
                    .await;
            let mut again = Vec::new();
            for (name, outcome) in todo.iter().zip(outcomes) {
                match outcome {
                    Outcome::Answered(resp) => match verify(ctx, &resp, &Expect::File(name)) {
                        Ok(n) => ctx.ok(class, n, started),
                        Err(why) => ctx.fail(class, why),
                    },
                    Outcome::Unprocessed => again.push(*name),
                    Outcome::Ended => return,
                    Outcome::Failed(why) => {
                        conn = None;
                        ctx.fail(class, why);
                    }
                }
            }
            if !again.is_empty() {
                ctx.retried(class, again.len() as u64);
                conn = None;
            }
            todo = again;
        }
        if !todo.is_empty() {
            ctx.fail(
                class,
                format!("{} requests refused on {ROUNDS} connections in a row", todo.len()),
            );
        }
    }
}
