//! Flow-control windows (RFC 9113 §5.2, §6.9): what we may send, what we let the peer send,
//! and when to announce more.
//!
//! Windows are signed: RFC 9113 §6.9.2 "A change to SETTINGS_INITIAL_WINDOW_SIZE can cause the
//! available space in a flow-control window to become negative. A sender MUST track the
//! negative flow-control window". Arithmetic is done in `i64` and checked against 2^31-1 so no
//! input can overflow it.

use super::frame::window_update::MAX_INCREMENT;

/// The largest flow-control window, 2^31-1 (RFC 9113 §6.9.1).
pub const MAX_WINDOW: u32 = MAX_INCREMENT;

/// The initial window of every stream and of the connection until SETTINGS or WINDOW_UPDATE
/// change it: 65,535 (RFC 9113 §6.9.2).
pub const DEFAULT_WINDOW: u32 = 65_535;

/// A window would pass 2^31-1. RFC 9113 §6.9.1: "If a sender receives a WINDOW_UPDATE that
/// causes a flow-control window to exceed this maximum, it MUST terminate either the stream or
/// the connection, as appropriate" with FLOW_CONTROL_ERROR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// The space the peer lets us send on a stream or on the connection.
///
/// # Examples
/// ```
/// use peregrine::http2::flow::SendWindow;
/// let mut w = SendWindow::new(10);
/// w.consume(10);
/// w.adjust(-5).unwrap(); // the peer lowered SETTINGS_INITIAL_WINDOW_SIZE by 5
/// assert_eq!(w.available(), 0);
/// w.increase(6).unwrap(); // WINDOW_UPDATE
/// assert_eq!(w.available(), 1);
/// assert!(w.increase(0x7fff_ffff).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWindow(i32);

impl SendWindow {
    /// A window of `initial` octets (at most 2^31-1; larger values are clamped).
    pub const fn new(initial: u32) -> SendWindow {
        SendWindow(if initial > MAX_WINDOW { MAX_WINDOW } else { initial } as i32)
    }

    /// How many octets may be sent now: 0 when the window is negative.
    pub const fn available(self) -> u32 {
        if self.0 < 0 { 0 } else { self.0 as u32 }
    }

    /// The signed window.
    pub const fn get(self) -> i32 {
        self.0
    }

    /// Takes `n` octets sent in DATA frames. The caller sends at most [`available`](Self::available).
    pub fn consume(&mut self, n: u32) {
        debug_assert!(n <= self.available());
        self.0 = (i64::from(self.0) - i64::from(n.min(self.available()))) as i32;
    }

    /// Applies a WINDOW_UPDATE increment.
    ///
    /// # Errors
    /// [`Overflow`] when the window would pass 2^31-1; the window is unchanged.
    pub fn increase(&mut self, increment: u32) -> Result<(), Overflow> {
        self.adjust(i64::from(increment))
    }

    /// Applies a change of SETTINGS_INITIAL_WINDOW_SIZE: RFC 9113 §6.9.2 "a receiver MUST
    /// adjust the size of all stream flow-control windows that it maintains by the difference
    /// between the new value and the old value."
    ///
    /// # Errors
    /// [`Overflow`] when the window would pass 2^31-1 ("An endpoint MUST treat a change to
    /// SETTINGS_INITIAL_WINDOW_SIZE that causes any flow-control window to exceed the maximum
    /// size as a connection error"); the window is unchanged.
    pub fn adjust(&mut self, delta: i64) -> Result<(), Overflow> {
        let w = i64::from(self.0) + delta;
        // Below: -2^31+1 at worst (a full window lowered by 2^31-1); fits in i32.
        if w > i64::from(MAX_WINDOW) || w < i64::from(i32::MIN) {
            return Err(Overflow);
        }
        self.0 = w as i32;
        Ok(())
    }
}

/// The space we let the peer send on a stream or on the connection, and the policy that
/// announces more.
///
/// Octets the peer sends are *received* (they use the window at once), then *released* by the
/// application once it has consumed them; released octets are announced with WINDOW_UPDATE
/// once they reach half the target window. So at any time
/// `window + unreleased + unannounced == target`: the peer can never have more than `target`
/// octets outstanding, which is how backpressure reaches it and what bounds the memory a peer
/// can make the application hold.
///
/// # Examples
/// ```
/// use peregrine::http2::flow::RecvWindow;
/// let mut w = RecvWindow::new(100);
/// w.recv(60).unwrap();
/// assert_eq!(w.release(40), None); // 40 < 50: not yet worth a WINDOW_UPDATE
/// assert_eq!(w.release(20), Some(60)); // half the window consumed: announce 60
/// assert_eq!(w.window(), 100);
/// assert!(w.recv(101).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWindow {
    /// What the peer may still send.
    window: u32,
    /// Received, not yet released by the application.
    unreleased: u32,
    /// Released, not yet announced.
    unannounced: u32,
    /// The window we keep the peer at.
    target: u32,
}

/// The peer sent more than its window allowed (RFC 9113 §6.9.1: FLOW_CONTROL_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded;

impl RecvWindow {
    /// A window whose target and initial size are `target` octets (at most 2^31-1).
    pub const fn new(target: u32) -> RecvWindow {
        let target = if target > MAX_WINDOW { MAX_WINDOW } else { target };
        RecvWindow { window: target, unreleased: 0, unannounced: 0, target }
    }

    /// A window the peer starts at `initial` octets (the connection's 65,535 fixed by RFC 9113
    /// §6.9.2) that we mean to keep at `target`: the difference is due at once, returned here
    /// for a WINDOW_UPDATE (`None` when `target <= initial`).
    pub fn grown(initial: u32, target: u32) -> (RecvWindow, Option<u32>) {
        let initial = initial.min(MAX_WINDOW);
        let target = target.clamp(initial, MAX_WINDOW);
        let w = RecvWindow { window: target, unreleased: 0, unannounced: 0, target };
        (w, (target > initial).then_some(target - initial))
    }

    /// What the peer may still send.
    pub const fn window(&self) -> u32 {
        self.window
    }

    /// Octets received and not yet released.
    pub const fn unreleased(&self) -> u32 {
        self.unreleased
    }

    /// The window we keep the peer at.
    pub const fn target(&self) -> u32 {
        self.target
    }

    /// Takes `n` octets the peer sent in one DATA frame (padding included).
    ///
    /// # Errors
    /// [`Exceeded`] when `n` is more than the window; nothing changes.
    pub fn recv(&mut self, n: u32) -> Result<(), Exceeded> {
        if n > self.window {
            return Err(Exceeded);
        }
        self.window -= n;
        self.unreleased += n;
        Ok(())
    }

    /// Releases `n` received octets (clamped to what is unreleased). Returns the increment to
    /// announce in a WINDOW_UPDATE once released octets reach half the target.
    pub fn release(&mut self, n: u32) -> Option<u32> {
        let n = n.min(self.unreleased);
        self.unreleased -= n;
        self.unannounced += n;
        if self.unannounced == 0 || self.unannounced < self.target / 2 {
            return None;
        }
        let inc = self.unannounced;
        self.window += inc;
        self.unannounced = 0;
        Some(inc)
    }

    /// Releases everything unreleased (the stream ended without the application consuming it,
    /// e.g. on reset). Returns the WINDOW_UPDATE increment due, as [`release`](Self::release).
    pub fn release_all(&mut self) -> Option<u32> {
        self.release(self.unreleased)
    }
}

#[cfg(test)]
mod tests {
    use super::{Exceeded, MAX_WINDOW, Overflow, RecvWindow, SendWindow};

    #[test]
    fn send_window_arithmetic() {
        // (initial, ops: +inc / settings delta, expect available / error)
        let mut w = SendWindow::new(65_535);
        w.consume(65_535);
        assert_eq!(w.available(), 0);
        // SETTINGS lowers the initial window: negative window, still nothing to send.
        w.adjust(-65_535).unwrap();
        assert_eq!((w.get(), w.available()), (-65_535, 0));
        w.increase(65_536).unwrap();
        assert_eq!(w.available(), 1);
        // Up to exactly 2^31-1, then overflow, window unchanged.
        let mut w = SendWindow::new(1);
        w.increase(MAX_WINDOW - 1).unwrap();
        assert_eq!(w.available(), MAX_WINDOW);
        assert_eq!(w.increase(1), Err(Overflow));
        assert_eq!(w.available(), MAX_WINDOW);
        assert_eq!(w.adjust(1), Err(Overflow));
        // The most negative a window can be: a full window consumed, then lowered to 0.
        let mut w = SendWindow::new(MAX_WINDOW);
        w.consume(MAX_WINDOW);
        w.adjust(-i64::from(MAX_WINDOW)).unwrap();
        assert_eq!(w.get(), -(MAX_WINDOW as i32));
        assert_eq!(SendWindow::new(u32::MAX).available(), MAX_WINDOW);
    }

    #[test]
    fn recv_window_announces_at_half_and_keeps_its_invariant() {
        let mut w = RecvWindow::new(10);
        assert_eq!(w.recv(11), Err(Exceeded));
        w.recv(10).unwrap();
        assert_eq!(w.window(), 0);
        assert_eq!(w.recv(1), Err(Exceeded));
        assert_eq!(w.release(4), None);
        assert_eq!(w.release(1), Some(5));
        // Releasing more than received is clamped.
        assert_eq!(w.release(100), Some(5));
        assert_eq!((w.window(), w.unreleased()), (10, 0));
        // Invariant over a walk.
        let mut w = RecvWindow::new(1000);
        let mut announced = 0;
        for i in 0..500u32 {
            let n = (i * 7) % 13;
            if w.recv(n).is_ok() {
                // The application lags: it releases what it received a step ago.
                announced += w.release(if i % 2 == 0 { n / 2 } else { 2 * n }).unwrap_or(0);
            }
            assert_eq!(w.window + w.unreleased + w.unannounced, 1000);
        }
        assert!(announced > 0);
        w.release_all();
        assert_eq!(w.unreleased(), 0);
        assert_eq!(w.window + w.unannounced, 1000);
    }

    #[test]
    fn a_window_of_one_announces_every_octet() {
        let mut w = RecvWindow::new(1);
        w.recv(1).unwrap();
        assert_eq!(w.release(1), Some(1));
    }

    #[test]
    fn the_connection_window_grows_from_its_fixed_start() {
        assert_eq!(RecvWindow::grown(65_535, 1 << 20).1, Some((1 << 20) - 65_535));
        assert_eq!(RecvWindow::grown(65_535, 1000).1, None);
        let (w, inc) = RecvWindow::grown(65_535, u32::MAX);
        assert_eq!((w.window(), inc), (MAX_WINDOW, Some(MAX_WINDOW - 65_535)));
    }
}
