//! Stream states (RFC 9113 §5.1) and their transitions.

use super::error::Reason;

/// The state of a stream (RFC 9113 §5.1):
///
/// ```text
///                          +--------+
///                  send PP |        | recv PP
///                 ,--------+  idle  +--------.
///                /         |        |         \
///               v          +--------+          v
///        +----------+          |           +----------+
///        |          |          | send H /  |          |
/// ,------+ reserved |          | recv H    | reserved +------.
/// |      | (local)  |          |           | (remote) |      |
/// |      +---+------+          v           +------+---+      |
/// |          |             +--------+             |          |
/// |          |     recv ES |        | send ES     |          |
/// |   send H |     ,-------+  open  +-------.     | recv H   |
/// |          |    /        |        |        \    |          |
/// |          v   v         +---+----+         v   v          |
/// |      +----------+          |           +----------+      |
/// |      |   half-  |          |           |   half-  |      |
/// |      |  closed  |          | send R /  |  closed  |      |
/// |      | (remote) |          | recv R    | (local)  |      |
/// |      +----+-----+          |           +-----+----+      |
/// |           |                |                 |           |
/// |           | send ES /      |       recv ES / |           |
/// |           | send R /       v        send R / |           |
/// |           | recv R     +--------+   recv R   |           |
/// | send R /  `----------->|        |<-----------'  send R / |
/// | recv R                 | closed |               recv R   |
/// `----------------------->|        |<-----------------------'
///                          +--------+
///
///    send:   endpoint sends this frame
///    recv:   endpoint receives this frame
///    H:  HEADERS frame (with implied CONTINUATION frames)
///    ES: END_STREAM flag
///    R:  RST_STREAM frame
///    PP: PUSH_PROMISE frame (with implied CONTINUATION frames)
/// ```
///
/// The two "reserved" states exist only through server push, which this crate does not
/// implement (it advertises SETTINGS_ENABLE_PUSH = 0 and refuses PUSH_PROMISE), so they have no
/// variant. A stream that reaches `Closed` leaves the connection's table; how it closed is kept
/// for a while in [`Closed`] records, because the rules for late frames depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum State {
    /// Not yet opened.
    #[default]
    Idle,
    /// Both sides may send.
    Open,
    /// We sent END_STREAM; the peer may still send.
    HalfClosedLocal,
    /// The peer sent END_STREAM; we may still send.
    HalfClosedRemote,
    /// Both sides are done, or the stream was reset.
    Closed(Closed),
}

/// How a stream closed, which decides what late frames on it mean (RFC 9113 §5.1 "closed").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    /// END_STREAM both ways. A late DATA or HEADERS is a connection error STREAM_CLOSED; a late
    /// WINDOW_UPDATE or RST_STREAM is ignored ("can be received in this state for a short
    /// period after a DATA or HEADERS frame containing an END_STREAM flag is sent").
    EndStream,
    /// The peer sent RST_STREAM. "An endpoint that receives any frame other than PRIORITY after
    /// receiving a RST_STREAM MUST treat that as a stream error (Section 5.4.2) of type
    /// STREAM_CLOSED."
    ResetByPeer(Reason),
    /// We sent RST_STREAM. "An endpoint MUST ignore frames that it receives on closed streams
    /// after it has sent a RST_STREAM frame."
    ResetLocally(Reason),
}

impl State {
    /// Opening by sending HEADERS (idle → open, or half-closed (local) with END_STREAM).
    /// Returns `false`, changing nothing, unless the stream is idle.
    pub fn send_open(&mut self, end_stream: bool) -> bool {
        if *self != State::Idle {
            return false;
        }
        *self = if end_stream { State::HalfClosedLocal } else { State::Open };
        true
    }

    /// Opening by receiving HEADERS (idle → open, or half-closed (remote) with END_STREAM).
    /// Returns `false`, changing nothing, unless the stream is idle.
    pub fn recv_open(&mut self, end_stream: bool) -> bool {
        if *self != State::Idle {
            return false;
        }
        *self = if end_stream { State::HalfClosedRemote } else { State::Open };
        true
    }

    /// Whether the peer may still send DATA or HEADERS (open, half-closed (local)).
    pub const fn can_recv(self) -> bool {
        matches!(self, State::Open | State::HalfClosedLocal)
    }

    /// Whether we may still send DATA or HEADERS (open, half-closed (remote)).
    pub const fn can_send(self) -> bool {
        matches!(self, State::Open | State::HalfClosedRemote)
    }

    /// The peer sent END_STREAM: open → half-closed (remote), half-closed (local) → closed.
    /// Returns `false`, changing nothing, if the peer may not send.
    pub fn recv_end(&mut self) -> bool {
        *self = match *self {
            State::Open => State::HalfClosedRemote,
            State::HalfClosedLocal => State::Closed(Closed::EndStream),
            _ => return false,
        };
        true
    }

    /// We sent END_STREAM: open → half-closed (local), half-closed (remote) → closed.
    /// Returns `false`, changing nothing, if we may not send.
    pub fn send_end(&mut self) -> bool {
        *self = match *self {
            State::Open => State::HalfClosedLocal,
            State::HalfClosedRemote => State::Closed(Closed::EndStream),
            _ => return false,
        };
        true
    }

    /// RST_STREAM sent or received: every state → closed (an already closed stream keeps how
    /// it closed first).
    pub fn reset(&mut self, how: Closed) {
        if !self.is_closed() {
            *self = State::Closed(how);
        }
    }

    /// Whether the stream is closed.
    pub const fn is_closed(self) -> bool {
        matches!(self, State::Closed(_))
    }

    /// Whether the stream counts against SETTINGS_MAX_CONCURRENT_STREAMS: RFC 9113 §5.1.2
    /// "Streams that are in the "open" state or in either of the "half-closed" states count
    /// toward the maximum number of streams that an endpoint is permitted to open."
    pub const fn is_active(self) -> bool {
        matches!(self, State::Open | State::HalfClosedLocal | State::HalfClosedRemote)
    }
}

#[cfg(test)]
mod tests {
    use super::{Closed, State};
    use crate::http2::error::Reason;

    #[derive(Clone, Copy, Debug)]
    enum Op {
        SendOpen(bool),
        RecvOpen(bool),
        SendEnd,
        RecvEnd,
        Reset,
    }

    fn apply(s: &mut State, op: Op) -> bool {
        match op {
            Op::SendOpen(es) => s.send_open(es),
            Op::RecvOpen(es) => s.recv_open(es),
            Op::SendEnd => s.send_end(),
            Op::RecvEnd => s.recv_end(),
            Op::Reset => {
                s.reset(Closed::ResetLocally(Reason::CANCEL));
                true
            }
        }
    }

    #[test]
    fn transitions_follow_the_diagram() {
        use Op::*;
        use State::*;
        let end = Closed(super::Closed::EndStream);
        let rst = Closed(super::Closed::ResetLocally(Reason::CANCEL));
        // (from, op, accepted, to)
        let cases = [
            (Idle, SendOpen(false), true, Open),
            (Idle, SendOpen(true), true, HalfClosedLocal),
            (Idle, RecvOpen(false), true, Open),
            (Idle, RecvOpen(true), true, HalfClosedRemote),
            (Idle, SendEnd, false, Idle),
            (Idle, RecvEnd, false, Idle),
            (Open, SendOpen(false), false, Open),
            (Open, RecvOpen(true), false, Open),
            (Open, RecvEnd, true, HalfClosedRemote),
            (Open, SendEnd, true, HalfClosedLocal),
            (Open, Reset, true, rst),
            (HalfClosedLocal, RecvEnd, true, end),
            (HalfClosedLocal, SendEnd, false, HalfClosedLocal),
            (HalfClosedLocal, Reset, true, rst),
            (HalfClosedRemote, SendEnd, true, end),
            (HalfClosedRemote, RecvEnd, false, HalfClosedRemote),
            (HalfClosedRemote, Reset, true, rst),
            (end, SendEnd, false, end),
            (end, RecvEnd, false, end),
            (end, Reset, true, end),
        ];
        for (from, op, ok, to) in cases {
            let mut s = from;
            assert_eq!(apply(&mut s, op), ok, "{from:?} {op:?}");
            assert_eq!(s, to, "{from:?} {op:?}");
        }
    }

    #[test]
    fn which_states_may_send_receive_and_count() {
        use State::*;
        let closed = Closed(super::Closed::EndStream);
        // (state, can_recv, can_send, active)
        let cases = [
            (Idle, false, false, false),
            (Open, true, true, true),
            (HalfClosedLocal, true, false, true),
            (HalfClosedRemote, false, true, true),
            (closed, false, false, false),
        ];
        for (s, recv, send, active) in cases {
            assert_eq!((s.can_recv(), s.can_send(), s.is_active()), (recv, send, active), "{s:?}");
        }
    }
}
