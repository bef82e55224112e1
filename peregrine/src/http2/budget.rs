//! Token buckets for the abuse budgets: each kind of costly peer behaviour may happen in a
//! burst, then only at a sustained rate, so a peer that legitimately does it now and then is
//! never punished while a flood runs dry quickly.

use std::time::Instant;

use super::config::Rate;

/// Milli-tokens per token: refills are tracked to a thousandth so slow rates still refill.
const MILLI: u64 = 1000;

/// A token bucket driven by the caller's clock.
///
/// # Examples
/// ```
/// use std::time::{Duration, Instant};
/// use peregrine::http2::{Rate, budget::Bucket};
/// let t0 = Instant::now();
/// let mut b = Bucket::new(Rate { burst: 2, per_second: 10 });
/// assert!(b.take(t0) && b.take(t0));
/// assert!(!b.take(t0)); // the burst is spent
/// assert!(b.take(t0 + Duration::from_millis(100))); // one token back after 100 ms
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Bucket {
    rate: Rate,
    milli: u64,
    last: Option<Instant>,
}

impl Bucket {
    /// A full bucket.
    pub const fn new(rate: Rate) -> Bucket {
        Bucket { rate, milli: rate.burst as u64 * MILLI, last: None }
    }

    fn refill(&mut self, now: Instant) {
        let cap = u64::from(self.rate.burst) * MILLI;
        if let Some(last) = self.last {
            // A clock that went backwards refills nothing.
            let ns = now.saturating_duration_since(last).as_nanos();
            // milli-tokens = ns * rate * 1000 / 1e9 = ns * rate / 1e6.
            let add = ns.saturating_mul(u128::from(self.rate.per_second)) / 1_000_000;
            self.milli = (u128::from(self.milli) + add).min(u128::from(cap)) as u64;
        }
        if self.last.is_none_or(|l| now > l) {
            self.last = Some(now);
        }
    }

    /// Takes one token. Returns `false` when the bucket is empty: the budget is spent.
    pub fn take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.milli < MILLI {
            return false;
        }
        self.milli -= MILLI;
        true
    }

    /// Gives back `n` tokens (capped at the burst): work that legitimately earns the peer some
    /// allowance, e.g. a DATA frame we sent earns its WINDOW_UPDATEs.
    pub fn credit(&mut self, n: u32) {
        let cap = u64::from(self.rate.burst) * MILLI;
        self.milli = (self.milli + u64::from(n) * MILLI).min(cap);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Bucket, Rate};

    #[test]
    fn burst_then_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::new(Rate { burst: 100, per_second: 50 });
        let taken = (0..1000).filter(|_| b.take(t0)).count();
        assert_eq!(taken, 100);
        // One second later: 50 more, no more.
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!((0..1000).filter(|_| b.take(t1)).count(), 50);
        // A long pause refills to the burst only.
        let t2 = t1 + Duration::from_secs(3600);
        assert_eq!((0..1000).filter(|_| b.take(t2)).count(), 100);
    }

    #[test]
    fn a_steady_legitimate_rate_never_runs_dry() {
        let t0 = Instant::now();
        let mut b = Bucket::new(Rate { burst: 10, per_second: 100 });
        // 90 events a second for a minute, evenly spread.
        for i in 0..5400u64 {
            assert!(b.take(t0 + Duration::from_micros(i * 11_112)), "event {i}");
        }
    }

    #[test]
    fn no_refill_rate_and_backwards_clocks_and_credit() {
        let t0 = Instant::now();
        let mut b = Bucket::new(Rate { burst: 3, per_second: 0 });
        assert_eq!((0..10).filter(|_| b.take(t0 + Duration::from_secs(99))).count(), 3);
        b.credit(2);
        assert_eq!(
            (0..10).filter(|_| b.take(t0)).count(),
            2,
            "earlier clock: no refill, credit kept"
        );
        b.credit(100);
        assert_eq!((0..10).filter(|_| b.take(t0)).count(), 3, "credit capped at the burst");
        let mut z = Bucket::new(Rate { burst: 0, per_second: 1000 });
        assert!(!z.take(t0 + Duration::from_secs(1)));
    }
}
