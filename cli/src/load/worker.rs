//! One load thread: a current-thread runtime, its share of the connections, each driven by its
//! own task through the one-connection API (no pool, no lock, no channel), and the figures it
//! records.
//!
//! The hot path of a request allocates nothing: the request's fields are borrowed from the
//! plan, prepared once per connection, and the connection re-sends the bytes it encoded for the
//! previous identical request; the requests in flight are a vector of fixed capacity; the
//! histograms are allocated once. Per request: one clock read when it is sent (the head's and
//! the end's times are the connection's read time, `Connection::received_at`, which it reads
//! once per read), a histogram record, and a store to a counter the progress line reads.

use std::rc::Rc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use peregrine::client::Error;
use peregrine::client::conn::{Connection, Event, Protocol, RequestId};
use tokio::sync::watch;
use tokio::time::{Instant, sleep, sleep_until};

use super::args::Stop;
use super::stats::{ErrorKind, Live, Stats, micros};
use super::thread::{RECONNECT_PAUSE, Shared, TIMER_SLACK, Thread};
use super::ws::{self, Kit};

/// One thread's share of the run.
pub struct Job {
    /// Global index of its first connection (open loop: staggers the schedules).
    pub first: u32,
    pub conns: u32,
    /// Count mode: requests this thread sends.
    pub budget: Option<u64>,
    pub live: Arc<Live>,
    pub start: Arc<Barrier>,
    pub stop: watch::Receiver<bool>,
}

/// What a thread hands back.
pub struct Outcome {
    pub stats: Stats,
    /// When recording started (after the warm-up) and when the thread stopped.
    pub measure_from: Instant,
    pub ended: Instant,
}

/// Runs one thread's share: connects, waits for every thread at the start line, loads until
/// the deadline, the count, or a stop (Ctrl-C).
///
/// # Errors
/// When the runtime cannot be built.
pub fn run(shared: Arc<Shared>, mut job: Job) -> Result<Outcome, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    let thread = Rc::new(Thread::new(shared.clone(), job.live.clone(), job.budget));
    let kit = shared.plan.ws.as_ref().map(|ws| Rc::new(Kit::new(&shared.plan, ws, &shared.config)));
    let (measure_from, ended) = local.block_on(&rt, async {
        let mut conns = Vec::with_capacity(job.conns as usize);
        for _ in 0..job.conns {
            conns.push(match &kit {
                Some(kit) => Opened::Ws(kit.connect(&thread).await),
                None => Opened::Http(thread.connect().await),
            });
        }
        // Every thread starts loading at once.
        job.start.wait();
        let t0 = Instant::now();
        let measure_from = t0 + shared.plan.warmup;
        let mut tasks = Vec::with_capacity(conns.len());
        for (i, conn) in conns.into_iter().enumerate() {
            let index = job.first + i as u32;
            let thread = thread.clone();
            tasks.push(match (conn, &kit) {
                (Opened::Ws(ws), Some(kit)) => tokio::task::spawn_local(ws::drive(
                    thread,
                    kit.clone(),
                    ws,
                    index,
                    t0,
                    measure_from,
                )),
                (Opened::Http(conn), _) => {
                    tokio::task::spawn_local(drive(thread, conn, index, t0, measure_from))
                }
                (Opened::Ws(_), None) => continue,
            });
        }
        let deadline = match shared.plan.stop {
            Stop::After(d) => Some(measure_from + d),
            Stop::Count(_) => None,
        };
        let all_done = async {
            for task in tasks {
                let _ = task.await;
            }
        };
        let stopped = async {
            while !*job.stop.borrow_and_update() {
                if job.stop.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::select! {
            _ = all_done => {}
            _ = stopped => {}
            _ = sleep_until(deadline.unwrap_or(t0)), if deadline.is_some() => {}
        }
        (measure_from, Instant::now())
    });
    // The tasks (and their requests in flight) end with the set.
    drop(local);
    drop(kit);
    let stats = Rc::try_unwrap(thread)
        .map_err(|_| "a connection task outlived its thread".to_owned())?
        .stats
        .into_inner();
    Ok(Outcome { stats, measure_from, ended: ended.max(measure_from) })
}

/// A connection opened before the start line.
enum Opened {
    Http(Option<Connection>),
    Ws(Option<peregrine::websocket::WebSocket>),
}

/// The time, read from the clock at the first ask and kept for the rest of one round of sends
/// (a clock read costs about 35 ns here, a tenth of a microsecond over the three events of a
/// response when read per event).
struct LazyNow(Option<Instant>);

impl LazyNow {
    fn now(&mut self) -> Instant {
        *self.0.get_or_insert_with(Instant::now)
    }
}

/// A request in flight.
struct InFlight {
    id: RequestId,
    /// Where its latency counts from: when it was sent, or in an open loop when it was due.
    start: Instant,
    /// Recorded (sent after the warm-up).
    recording: bool,
    status: u16,
    bytes: u64,
}

/// Drives one connection for the whole run: sends while it has room (closed loop) or when a
/// request is due (open loop), records each response, reconnects when the connection fails
/// or the server closes it.
async fn drive(
    thread: Rc<Thread>,
    mut conn: Option<Connection>,
    index: u32,
    t0: Instant,
    measure_from: Instant,
) {
    let plan = &thread.shared.plan;
    let fields: Vec<(&str, &[u8])> =
        plan.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    let cap = plan.pipeline.max(plan.streams) as usize;
    let mut in_flight: Vec<InFlight> = Vec::with_capacity(cap);
    let conns = f64::from(plan.connections);
    // Open loop: each connection sends rate/conns per second, schedules staggered.
    let interval = plan.rate.map(|r| Duration::from_secs_f64(conns / r));
    let mut due = interval.map(|i| t0 + i.mul_f64(f64::from(index) / conns));
    let mut due_late = false;
    loop {
        let Some(c) = conn.as_mut() else {
            if thread.spent() {
                return;
            }
            conn = thread.connect().await;
            if conn.is_none() {
                // In count mode a failed connect loses a request, so a run always ends.
                let _ = thread.take();
                sleep(RECONNECT_PAUSE).await;
            }
            continue;
        };
        let depth = match c.protocol() {
            Protocol::Http1 => plan.pipeline as usize,
            Protocol::Http2 | Protocol::Http3 => (plan.streams as usize).min(c.max_in_flight()),
        };
        // Send what may go now. The clock is read only where it decides something (the open
        // loop's schedule, the end of the warm-up): a request's latency counts from the
        // connection's own send time, or from its due time when it goes out late.
        let mut clock = LazyNow(None);
        let mut failed = None;
        loop {
            let room = in_flight.len() < depth && c.can_send(plan.method_tag);
            let (due_start, late) = match due {
                None if !room => break,
                None => (None, false),
                Some(d) if d > clock.now() => break,
                Some(d) => {
                    let late = due_late || clock.now() - d > TIMER_SLACK;
                    (late.then_some(d), late)
                }
            };
            if !room {
                // Due with no room in flight: late, whenever it goes.
                due_late = true;
                break;
            }
            // Past the warm-up: known without the clock once the last bytes came after it.
            let recording = match due_start {
                Some(d) => d >= measure_from,
                None => {
                    Instant::from_std(c.received_at()) >= measure_from
                        || clock.now() >= measure_from
                }
            };
            if recording && !thread.take() {
                break;
            }
            if let (Some(d), Some(i)) = (due.as_mut(), interval) {
                *d += i;
                due_late = false;
            }
            let sent = c.send_request(&plan.method, &plan.target, &fields, &plan.body);
            match sent {
                Ok(id) => {
                    let start = due_start.unwrap_or_else(|| Instant::from_std(c.sent_at()));
                    in_flight.push(InFlight { id, start, recording, status: 0, bytes: 0 });
                    if recording {
                        let mut stats = thread.stats.borrow_mut();
                        stats.sent += 1;
                        stats.late += u64::from(late);
                    }
                }
                Err(e) => {
                    failed = Some((e, recording));
                    break;
                }
            }
        }
        if let Some((e, recording)) = failed {
            // The request could not even be queued: the connection is unusable.
            if recording {
                thread.error(ErrorKind::of(&e), 1);
            }
            lose(&thread, &mut in_flight, &e);
            conn = None;
            sleep(RECONNECT_PAUSE).await;
            continue;
        }
        if in_flight.is_empty() {
            if thread.spent() {
                return;
            }
            match due {
                // Room, not spent, not due yet: wait for the schedule.
                Some(d) if d > clock.now() && c.is_reusable() => sleep_until(d).await,
                // HTTP/3 out of QUIC stream credit with nothing in flight: the connection
                // reports (Writable) when the server grants more.
                None if c.protocol() == Protocol::Http3 && c.is_reusable() => {
                    let got = c.next_event().await.map(Got::of);
                    if let Err(e) = on_event(&thread, &mut in_flight, got, c.received_at()) {
                        lose(&thread, &mut in_flight, &e);
                        conn = None;
                    }
                }
                // Nothing in flight and nothing could be sent: the connection is done (closed
                // by the server, or refusing streams); open another.
                _ => conn = None,
            }
            continue;
        }
        // Wait for the connection, or in an open loop with room in flight, for the next due time.
        let outcome = match due {
            Some(d) if in_flight.len() < depth && !thread.spent() => {
                tokio::select! {
                    biased;
                    event = c.next_event() => {
                        let got = event.map(Got::of);
                        on_event(&thread, &mut in_flight, got, c.received_at())
                    }
                    _ = sleep_until(d) => Ok(()),
                }
            }
            _ => {
                let got = c.next_event().await.map(Got::of);
                on_event(&thread, &mut in_flight, got, c.received_at())
            }
        };
        if let Err(e) = outcome {
            lose(&thread, &mut in_flight, &e);
            conn = None;
        }
    }
}

/// Counts the requests in flight on a failed connection as errors of its kind.
fn lose(thread: &Thread, in_flight: &mut Vec<InFlight>, e: &Error) {
    let n = in_flight.iter().filter(|s| s.recording).count() as u64;
    if n > 0 {
        thread.error(ErrorKind::of(e), n);
    }
    in_flight.clear();
}

/// What the load loop keeps of an event: no borrow of the connection, which it asks next for
/// the event's arrival time.
enum Got {
    Head { id: RequestId, status: u16 },
    Data { id: RequestId, len: usize },
    End { id: RequestId },
    Failed { id: RequestId, error: Error },
    Writable,
}

impl Got {
    fn of(event: Event<'_>) -> Got {
        match event {
            Event::Head { id, head } => Got::Head { id, status: head.status() },
            Event::Data { id, data } => Got::Data { id, len: data.len() },
            Event::End { id, .. } => Got::End { id },
            Event::Failed { id, error } => Got::Failed { id, error },
            Event::Writable { .. } => Got::Writable,
        }
    }
}

/// Records one event, whose bytes arrived at `arrived`; a connection-wide failure comes back
/// as the error.
fn on_event(
    thread: &Thread,
    in_flight: &mut Vec<InFlight>,
    got: Result<Got, Error>,
    arrived: std::time::Instant,
) -> Result<(), Error> {
    let find = |in_flight: &[InFlight], id: RequestId| in_flight.iter().position(|s| s.id == id);
    let since =
        |start: Instant| micros(Instant::from_std(arrived).saturating_duration_since(start));
    match got? {
        Got::Head { id, status } => {
            if let Some(s) = find(in_flight, id).and_then(|i| in_flight.get_mut(i)) {
                s.status = status;
                if s.recording {
                    let ttfb = since(s.start);
                    let _ = thread.stats.borrow_mut().ttfb.record(ttfb);
                }
            }
        }
        Got::Data { id, len } => {
            if let Some(s) = find(in_flight, id).and_then(|i| in_flight.get_mut(i)) {
                s.bytes += len as u64;
            }
        }
        Got::End { id } => {
            if let Some(i) = find(in_flight, id) {
                let s = in_flight.swap_remove(i);
                if s.recording {
                    let latency = since(s.start);
                    let mut stats = thread.stats.borrow_mut();
                    let _ = stats.latency.record(latency);
                    if let Some(n) = stats.status.get_mut(usize::from(s.status)) {
                        *n += 1;
                    }
                    stats.bytes += s.bytes;
                    Live::bump(&thread.live.completed, 1);
                }
            }
        }
        Got::Failed { id, error } => {
            if let Some(i) = find(in_flight, id) {
                if in_flight.swap_remove(i).recording {
                    thread.error(ErrorKind::of(&error), 1);
                }
            }
        }
        Got::Writable => {}
    }
    Ok(())
}
