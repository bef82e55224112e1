//! Requests the server answers itself on an HTTP/1.1 connection (health, metrics, fixed
//! answers; see `server::ops`), without starting a handler.

use super::fixed_run::{queue_only, write_run};
use super::requests::Step;
use super::{Close, H1Conn};
use crate::Method;
use crate::handler::Handler;
use crate::http1::framing::{BodyLength, RequestFraming};
use crate::request::HeadSpans;

impl<H: Handler> H1Conn<H> {
    /// Answers the parsed head (`len` bytes at the front of the read buffer) when it is a
    /// `GET` or `HEAD` without a body of one of the server's own endpoints; `None` leaves it
    /// to the handler. The answer is logged like any request, and says `Connection: close`
    /// during a drain.
    #[inline(never)]
    pub(super) fn answer_ops(
        &mut self,
        spans: &HeadSpans,
        framing: &RequestFraming,
        len: usize,
    ) -> Result<Option<Step>, Close> {
        let method = spans.method();
        let bodyless = framing.body == BodyLength::Length(0);
        if !bodyless || !matches!(method, Method::Get | Method::Head) {
            return Ok(None);
        }
        // Borrowed, not cloned: no reference count touched per request.
        let Some(ops) = self.worker.ops.as_deref() else {
            return Ok(None);
        };
        let Some(mut res) = self.rbuf.get(spans.path_range()).and_then(|p| ops.answer(p)) else {
            return Ok(None);
        };
        let head = self.rbuf.split_to(len).freeze();
        if self.worker.access_log.is_some() {
            self.log.get_or_insert_with(Default::default).start(&head, spans);
        }
        self.client_close = !framing.keep_alive;
        if let Some(log) = &mut self.log {
            log.status = res.status().as_u16();
        }
        let (rest, n) = self.encode_response(&mut res)?;
        if rest.is_some() {
            // Both bodies are short texts, copied whole; never streamed.
            return Err(Close::Done);
        }
        if let Some(log) = &mut self.log {
            log.bytes = n;
        }
        self.log_response();
        Ok(Some(if self.conn.is_closed() { Step::Close } else { Step::Next }))
    }

    /// Copies a run of fixed answers still counted into the write buffer: something else is
    /// queued after them.
    #[inline]
    pub(super) fn queue_fixed_run(&mut self) -> Result<(), Close> {
        let H1Conn { run, worker, date, wbuf, .. } = self;
        if run.is_pending() { write_run(run, queue_only, worker, date, wbuf) } else { Ok(()) }
    }

    /// Answers an HTTP/1.1 keep-alive `GET` or `HEAD` with the fixed answer `index` (see
    /// `next_of`): its prepared bytes with the batch's Date, under the wire state's plan (the
    /// caller consumes the head). During a drain (or for an answer not prepared) it goes
    /// through the general encoder, which says `Connection: close` when draining.
    pub(super) fn answer_fixed(&mut self, index: usize, is_head: bool) -> Result<Step, Close> {
        let Some(fixed) = self.worker.fixed(index) else {
            return Err(Close::Done);
        };
        if self.worker.draining() || !fixed.is_prepared() {
            let mut res = fixed.response();
            if self.worker.draining() {
                self.conn.shutdown();
            }
            if self.encode_response(&mut res)?.0.is_some() {
                // Prepared answers have short bodies, copied whole; never streamed.
                return Err(Close::Done);
            }
            return Ok(if self.conn.is_closed() { Step::Close } else { Step::Next });
        }
        let H1Conn { io, worker, wbuf, wpos, run, date, conn, .. } = &mut *self;
        let Some(fixed) = worker.fixed(index) else {
            return Err(Close::Done);
        };
        let (status, size) = (fixed.status(), fixed.body_len());
        // On plain TCP with nothing else queued the answer is counted, not copied: the flush
        // writes the run from the worker's copy (`fixed_run.rs`).
        let countable = io.is_plain() && *wpos >= wbuf.len();
        let sent = conn.send_response(status, Some(size), false, wbuf, |plan, out| {
            // A kept-alive HTTP/1.1 GET or HEAD with no body (`fixed_answer`), no drain: the
            // plan is the one the prepared bytes were made for.
            debug_assert!(!plan.close);
            if countable
                && let Some(len) = fixed.h1_len(is_head)
                && run.extend(index, is_head, len)
            {
                return Ok(size);
            }
            if run.is_pending() {
                // Cannot fail: the run's answer exists (it was counted from it).
                let _ = write_run(run, queue_only, worker, date, out);
            }
            if out.capacity() == 0 {
                *out = worker.buffers.take_write();
            }
            let date = date.get_or_insert_with(crate::server::clock::date);
            fixed.write_h1(is_head, date, out);
            Ok(size)
        });
        sent.map(|_| Step::Next).map_err(|_| Close::Done)
    }
}
