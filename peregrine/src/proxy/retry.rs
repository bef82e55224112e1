//! The retry budget: retries may add at most a fixed share to an upstream pool's requests,
//! so that when a pool fails, retries do not multiply its load (Finagle's `RetryBudget`,
//! Envoy's retry budgets).

use std::sync::atomic::{AtomicI64, Ordering};

/// Milli-tokens a retry costs.
const COST: i64 = 1000;

/// A token bucket in milli-tokens: every request deposits `ratio` of a retry, every retry
/// withdraws one; the bucket starts with `reserve` retries and holds at most `cap`.
#[derive(Debug)]
pub(crate) struct Budget {
    balance: AtomicI64,
    deposit: i64,
    cap: i64,
}

impl Budget {
    /// A budget letting retries be `percent` percent of requests, with `reserve` retries at
    /// hand for a quiet pool (and at most 100 + `reserve` saved up).
    pub(crate) fn new(percent: u32, reserve: u32) -> Budget {
        let reserve = i64::from(reserve) * COST;
        Budget {
            balance: AtomicI64::new(reserve),
            deposit: i64::from(percent) * COST / 100,
            cap: reserve + 100 * COST,
        }
    }

    /// A request was sent: its share of a retry goes in.
    #[inline]
    pub(crate) fn deposit(&self) {
        if self.balance.load(Ordering::Relaxed) < self.cap {
            self.balance.fetch_add(self.deposit, Ordering::Relaxed);
        }
    }

    /// Takes one retry's worth, if there is one.
    pub(crate) fn withdraw(&self) -> bool {
        let mut now = self.balance.load(Ordering::Relaxed);
        loop {
            if now < COST {
                return false;
            }
            match self.balance.compare_exchange_weak(
                now,
                now - COST,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_are_a_share_of_requests() {
        struct Case {
            percent: u32,
            reserve: u32,
            requests: usize,
            retries_allowed: usize,
        }
        let cases = [
            Case { percent: 20, reserve: 0, requests: 0, retries_allowed: 0 },
            Case { percent: 20, reserve: 0, requests: 100, retries_allowed: 20 },
            Case { percent: 20, reserve: 10, requests: 100, retries_allowed: 30 },
            Case { percent: 100, reserve: 0, requests: 5, retries_allowed: 5 },
            // Saved up at most 100 retries beyond the reserve.
            Case { percent: 50, reserve: 3, requests: 1000, retries_allowed: 103 },
        ];
        for case in cases {
            let b = Budget::new(case.percent, case.reserve);
            for _ in 0..case.requests {
                b.deposit();
            }
            let mut n = 0;
            while b.withdraw() {
                n += 1;
            }
            assert_eq!(n, case.retries_allowed);
        }
    }
}
