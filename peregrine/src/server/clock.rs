//! The wall clock the servers' `Date` field reads, to the second.
//!
//! `SystemTime::now()` reads the precise clock and `duration_since(UNIX_EPOCH)` then checks and
//! subtracts: ~120 instructions per call, paid per response on a keep-alive connection (each
//! request is its own batch). The Date field only shows seconds (RFC 9110 §5.6.7), so the
//! coarse clock (`CLOCK_REALTIME_COARSE`, the time of the last timer tick, a few milliseconds
//! old at most; the vDSO reads it without the TSC) does: ~25 instructions.
//!
//! Under Miri (`.ci/miri.sh`) the tests read the clock through Miri's emulation of
//! `clock_gettime`, which needs `-Zmiri-disable-isolation` for the real time.
#![allow(unsafe_code)]

/// Seconds since the Unix epoch (0 for a clock set before 1970).
#[cfg(target_os = "linux")]
#[inline]
pub(crate) fn unix_secs() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration, and
    // CLOCK_REALTIME_COARSE is a clock id every Linux since 2.6.32 knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    if rc != 0 {
        return precise_secs();
    }
    u64::try_from(ts.tv_sec).unwrap_or(0)
}

/// Seconds since the Unix epoch (0 for a clock set before 1970).
#[cfg(not(target_os = "linux"))]
#[inline]
pub(crate) fn unix_secs() -> u64 {
    precise_secs()
}

fn precise_secs() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The current IMF-fixdate for a response's `Date` field (the per-thread cache of
/// [`crate::date`] formats it once a second).
#[inline]
pub(crate) fn date() -> crate::date::ImfFixdate {
    crate::date::at_secs(unix_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_seconds_are_the_precise_ones_within_a_tick() {
        let before = precise_secs();
        let coarse = unix_secs();
        let after = precise_secs();
        // The coarse clock lags by at most a timer tick (≤ 10 ms): never ahead, at most one
        // second behind across a boundary.
        assert!(coarse <= after && coarse + 1 >= before, "{before} {coarse} {after}");
    }

    #[test]
    fn date_is_the_formatted_seconds() {
        let d = date();
        let secs = unix_secs();
        let again = crate::date::at_secs(secs);
        assert!(d == again || d == crate::date::at_secs(secs - 1), "{d} {again}");
    }
}
