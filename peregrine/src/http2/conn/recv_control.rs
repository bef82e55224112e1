//! Receiving control frames: SETTINGS (RFC 9113 §6.5), PING (§6.7), GOAWAY (§6.8),
//! WINDOW_UPDATE (§6.9) and RST_STREAM (§6.4).

use super::event::{Pending, Ready, Src};
use super::lifecycle::{SHUTDOWN_PING, Spend};
use super::streams::{BLOCKED, Past};
use super::{Conn, Role};
use crate::http2::error::{Error, Reason};
use crate::http2::frame::settings::{self as settings_frame, SettingId};
use crate::http2::frame::{GoAway, Ping, RstStream, Settings, WindowUpdate};
use crate::http2::stream::Closed;

impl Conn {
    /// Counts an acknowledgement we queue; a peer that makes us queue more than
    /// `Limits::max_queued_acks` between two `poll_transmit` calls (it does not read) ends
    /// the connection.
    fn queue_ack(&mut self) -> bool {
        self.queued_acks += 1;
        if self.queued_acks > self.config.limits.max_queued_acks {
            self.fail(Error::connection(
                Reason::ENHANCE_YOUR_CALM,
                "too many queued acknowledgements",
            ));
            return false;
        }
        true
    }

    /// RFC 9113 §6.5.3: "Upon receiving a SETTINGS frame with the ACK flag set, the sender of
    /// the altered settings can rely on the values from the oldest unacknowledged SETTINGS
    /// frame having been applied." Otherwise the values are applied in order and acknowledged
    /// ("Once all values have been processed, the recipient MUST immediately emit a SETTINGS
    /// frame with the ACK flag set").
    pub(super) fn on_settings(&mut self, s: Settings<'_>) -> Option<Ready> {
        if !self.spend(Spend::Control) {
            return None;
        }
        if s.ack {
            if !self.settings_acked {
                self.settings_acked = true;
                self.settings_deadline = None;
                // The peer now encodes against our table size.
                self.decoder.set_max_table_size(self.config.header_table_size as usize);
                self.pending.push_back(Pending::SettingsAcked);
            }
            return None;
        }
        if s.len() > self.config.limits.max_settings_entries {
            self.fail(Error::connection(Reason::ENHANCE_YOUR_CALM, "too many SETTINGS entries"));
            return None;
        }
        for (id, value) in s.iter() {
            if let Err(e) = self.apply_peer_setting(id, value) {
                self.fail(e);
                return None;
            }
        }
        if !self.queue_ack() {
            return None;
        }
        settings_frame::encode_ack(&mut self.ctrl);
        self.pending.push_back(Pending::Settings);
        None
    }

    /// Applies one of the peer's settings (RFC 9113 §6.5.2, §6.9.2).
    pub(super) fn apply_peer_setting(&mut self, id: SettingId, value: u32) -> Result<(), Error> {
        match id {
            // "A client MUST treat receipt of a SETTINGS frame with SETTINGS_ENABLE_PUSH set to
            // 1 as a connection error (Section 5.4.1) of type PROTOCOL_ERROR."
            SettingId::ENABLE_PUSH if value == 1 && self.role == Role::Client => {
                return Err(Error::connection(Reason::PROTOCOL_ERROR, "server set ENABLE_PUSH"));
            }
            SettingId::HEADER_TABLE_SIZE => self.encoder.set_peer_max_table_size(value as usize),
            // §6.9.2: "When the value of SETTINGS_INITIAL_WINDOW_SIZE changes, a receiver MUST
            // adjust the size of all stream flow-control windows that it maintains by the
            // difference between the new value and the old value." "An endpoint MUST treat a
            // change to SETTINGS_INITIAL_WINDOW_SIZE that causes any flow-control window to
            // exceed the maximum size as a connection error (Section 5.4.1) of type
            // FLOW_CONTROL_ERROR."
            SettingId::INITIAL_WINDOW_SIZE => {
                let delta = i64::from(value) - i64::from(self.peer.initial_window_size);
                for i in 0..self.streams.slab.slot_count() {
                    let Some(key) = self.streams.slab.key_at(i) else { continue };
                    let Some(s) = self.streams.get(key) else { continue };
                    if s.send.adjust(delta).is_err() {
                        return Err(Error::connection(
                            Reason::FLOW_CONTROL_ERROR,
                            "INITIAL_WINDOW_SIZE overflows a window",
                        ));
                    }
                }
                if delta > 0 {
                    self.wake_blocked(None);
                }
            }
            _ => {}
        }
        self.peer.apply(id, value);
        Ok(())
    }

    /// RFC 9113 §6.7: "Receivers of a PING frame that does not include an ACK flag MUST send
    /// a PING frame with the ACK flag set in response, with an identical frame payload."
    pub(super) fn on_ping(&mut self, p: Ping) -> Option<Ready> {
        if p.ack {
            self.pending.push_back(Pending::PingAck(p.payload));
            if p.payload == SHUTDOWN_PING {
                self.finish_graceful();
            }
            return None;
        }
        if !self.spend(Spend::Control) || !self.queue_ack() {
            return None;
        }
        Ping { ack: true, payload: p.payload }.encode(&mut self.ctrl);
        self.pending.push_back(Pending::Ping(p.payload));
        None
    }

    /// RFC 9113 §6.8: the peer opens no more streams; ours above its last-stream-id "were not
    /// or will not be processed" and can be retried. "Endpoints MUST NOT increase the value
    /// they send in the last stream identifier": we keep the smallest seen.
    pub(super) fn on_goaway(&mut self, g: GoAway<'_>, debug_data: Src) -> Option<Ready> {
        let last = self.goaway_recv.map_or(g.last_stream_id, |l| l.min(g.last_stream_id));
        self.goaway_recv = Some(last);
        self.goaway_reason = g.reason;
        for i in 0..self.streams.slab.slot_count() {
            let Some(key) = self.streams.slab.key_at(i) else { continue };
            let Some(s) = self.streams.get(key) else { continue };
            if s.local && s.id > last && !s.state.is_closed() {
                // §8.7: "Requests with stream identifiers higher than the last stream
                // identifier ... were not processed"; REFUSED_STREAM says the same for one.
                self.end_stream(key, Closed::ResetByPeer(Reason::REFUSED_STREAM), true);
            }
        }
        self.check_done();
        Some(Ready::GoAway { last_stream_id: g.last_stream_id, reason: g.reason, debug_data })
    }

    /// RFC 9113 §6.9: credit for the connection or one stream.
    pub(super) fn on_window_update(&mut self, w: WindowUpdate) -> Option<Ready> {
        if !self.spend(Spend::Control) {
            return None;
        }
        if w.stream.is_zero() {
            // §6.9.1: "If a sender receives a WINDOW_UPDATE that causes a flow-control window
            // to exceed this maximum, it MUST terminate either the stream or the connection,
            // as appropriate. ... for the connection, a GOAWAY frame with an error code of
            // FLOW_CONTROL_ERROR is sent."
            if self.send_window.increase(w.increment).is_err() {
                self.fail(Error::connection(
                    Reason::FLOW_CONTROL_ERROR,
                    "connection window above 2^31-1",
                ));
            } else {
                self.wake_blocked(None);
            }
            return None;
        }
        let Some(key) = self.streams.key(w.stream) else {
            match self.streams.past(w.stream) {
                // §5.1 idle: only HEADERS and PRIORITY may arrive.
                Past::Idle => self.fail(Error::connection(
                    Reason::PROTOCOL_ERROR,
                    "WINDOW_UPDATE on an idle stream",
                )),
                Past::Closed(Closed::ResetByPeer(_)) => {
                    self.stream_error(w.stream, Reason::STREAM_CLOSED)
                }
                // §5.1 closed: "WINDOW_UPDATE or RST_STREAM frames can be received in this
                // state for a short period after a DATA or HEADERS frame containing an
                // END_STREAM flag is sent"; after our RST_STREAM all frames are ignored.
                _ => {}
            }
            return None;
        };
        let overflow = self.streams.get(key).is_some_and(|s| s.send.increase(w.increment).is_err());
        if overflow {
            // "For streams, the sender sends a RST_STREAM with an error code of
            // FLOW_CONTROL_ERROR".
            self.stream_error(w.stream, Reason::FLOW_CONTROL_ERROR);
        } else if self.streams.slab.is_queued(BLOCKED, key) {
            self.wake_blocked(Some(key));
        }
        None
    }

    /// RFC 9113 §6.4: the peer ends a stream. A server counts streams the client opened and
    /// cancelled before the response was complete (CVE-2023-44487, rapid reset).
    pub(super) fn on_rst_stream(&mut self, r: RstStream) -> Option<Ready> {
        let Some(key) = self.streams.key(r.stream) else {
            match self.streams.past(r.stream) {
                // §6.4: "If a RST_STREAM frame identifying an idle stream is received, the
                // recipient MUST treat this as a connection error (Section 5.4.1) of type
                // PROTOCOL_ERROR."
                Past::Idle => self.fail(Error::connection(
                    Reason::PROTOCOL_ERROR,
                    "RST_STREAM on an idle stream",
                )),
                // §5.4.2: "To avoid looping, an endpoint MUST NOT send a RST_STREAM in response
                // to a RST_STREAM frame." A stray one still costs work.
                _ => {
                    self.spend(Spend::Control);
                }
            }
            return None;
        };
        let s = self.streams.get(key)?;
        let cancelled = self.role == Role::Server && !s.local && s.state.can_send();
        let budget = if cancelled { Spend::RapidReset } else { Spend::Control };
        if !self.spend(budget) {
            return None;
        }
        // §8.7: REFUSED_STREAM means the peer did not process the request: retryable.
        let retryable = r.reason == Reason::REFUSED_STREAM;
        self.end_stream(key, Closed::ResetByPeer(r.reason), retryable);
        None
    }
}
