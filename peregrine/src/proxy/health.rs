//! Active health checks: a thread of their own with a current-thread runtime, checking every
//! server of every pool that asks for it, each on its own interval, and taking servers out of
//! (and back into) their pool's choice by the rise and fall thresholds.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::watch;

use super::upstream::Pool;
use crate::Method;
use crate::client::conn::{Connection, Event};

/// The running checks; dropping this stops them.
#[derive(Debug)]
pub(crate) struct Checker {
    stop: watch::Sender<bool>,
}

impl Drop for Checker {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

impl Checker {
    /// Starts checking `pools` (those with a [`HealthCheck`](super::HealthCheck)); `None` when
    /// there are none, or the thread cannot start (logged: the servers then stay in).
    pub(crate) fn start(pools: Vec<Arc<Pool>>) -> Option<Checker> {
        if pools.is_empty() {
            return None;
        }
        let (stop, stopped) = watch::channel(false);
        let spawned =
            std::thread::Builder::new().name("peregrine-health".into()).spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        tracing::error!("health checks cannot start: {e}");
                        return;
                    }
                };
                rt.block_on(async move {
                    let local = tokio::task::LocalSet::new();
                    local
                        .run_until(async move {
                            for pool in pools {
                                for server in 0..pool.servers.len() {
                                    let (pool, mut stopped) = (pool.clone(), stopped.clone());
                                    tokio::task::spawn_local(async move {
                                        tokio::select! {
                                            () = check_forever(&pool, server) => {}
                                            _ = stopped.wait_for(|s| *s) => {}
                                        }
                                    });
                                }
                            }
                            let mut stopped = stopped;
                            let _ = stopped.wait_for(|s| *s).await;
                        })
                        .await;
                });
            });
        match spawned {
            Ok(_) => Some(Checker { stop }),
            Err(e) => {
                tracing::error!("health checks cannot start: {e}");
                None
            }
        }
    }
}

/// Checks one server every interval, forever.
async fn check_forever(pool: &Pool, server: usize) {
    let Some(check) = pool.health.clone() else { return };
    let s = &pool.servers[server];
    let (mut ok_run, mut fail_run) = (0u32, 0u32);
    let mut conn: Option<Connection> = None;
    let mut interval = tokio::time::interval(check.interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let outcome =
            tokio::time::timeout(check.timeout, probe(pool, server, &check.path, &mut conn)).await;
        let result = match outcome {
            Ok(r) => r,
            Err(_) => Err("no answer within the check's timeout".to_owned()),
        };
        if result.is_err() {
            conn = None;
        }
        let up = s.healthy.load(Ordering::Relaxed);
        match result {
            Ok(()) => {
                fail_run = 0;
                ok_run += 1;
                if !up && ok_run >= check.rise {
                    s.healthy.store(true, Ordering::Relaxed);
                    tracing::warn!(upstream = %s.name, "health check: up after {ok_run} successes");
                }
            }
            Err(why) => {
                ok_run = 0;
                fail_run += 1;
                if up && fail_run >= check.fall {
                    s.healthy.store(false, Ordering::Relaxed);
                    tracing::warn!(upstream = %s.name, "health check: down after {fail_run} failures: {why}");
                }
            }
        }
    }
}

/// One check: `GET path` on a kept-alive connection (a new one when there is none); a 2xx or
/// 3xx passes.
async fn probe(
    pool: &Pool,
    server: usize,
    path: &str,
    conn: &mut Option<Connection>,
) -> Result<(), String> {
    let c = match conn {
        Some(c) if c.is_reusable() => c,
        _ => {
            let origin = &pool.servers[server].origin;
            let fresh = Connection::connect_origin(origin, &pool.config)
                .await
                .map_err(|e| e.to_string())?;
            conn.insert(fresh)
        }
    };
    c.send_request(Method::Get, path, &[("user-agent", b"peregrine-health-check")], &[])
        .map_err(|e| e.to_string())?;
    let mut status = 0;
    loop {
        match c.next_event().await.map_err(|e| e.to_string())? {
            Event::Head { head, .. } => status = head.status(),
            Event::End { .. } => break,
            Event::Failed { error, .. } => return Err(error.to_string()),
            _ => {}
        }
    }
    if (200..400).contains(&status) { Ok(()) } else { Err(format!("status {status}")) }
}
