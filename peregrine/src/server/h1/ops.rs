//! Requests the server answers itself on an HTTP/1.1 connection (health, metrics, fixed
//! answers; see `server::ops`), without starting a handler.

use super::write::{queue_only, write_run};
use super::{Close, Conn, Step};
use crate::handler::Handler;
use crate::http1::framing::{BodyLength, RequestFraming};
use crate::request::HeadSpans;
use crate::{Method, Version};

impl<H: Handler> Conn<H> {
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
    ) -> Result<Option<Step<H::Future>>, Close> {
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
        let keep_alive = framing.keep_alive && !self.worker.draining();
        let is_head = method == Method::Head;
        if let Some(log) = &mut self.log {
            log.status = res.status().as_u16();
        }
        let (rest, n) = self.encode_response(&mut res, is_head, spans.version(), keep_alive)?;
        if rest.is_some() {
            // Both bodies are short texts, copied whole; never streamed.
            return Err(Close::Done);
        }
        if let Some(log) = &mut self.log {
            log.bytes = n;
        }
        self.log_response();
        Ok(Some(if keep_alive { Step::Next } else { Step::Stop }))
    }

    /// Copies a run of fixed answers still counted into the write buffer: something else is
    /// queued after them.
    #[inline]
    pub(super) fn queue_fixed_run(&mut self) -> Result<(), Close> {
        let Conn { run, worker, date, wbuf, .. } = self;
        if run.is_pending() { write_run(run, queue_only, worker, date, wbuf) } else { Ok(()) }
    }

    /// Answers an HTTP/1.1 keep-alive `GET` or `HEAD` with the fixed answer `index` (see
    /// `next_of`): its prepared bytes with the batch's Date; the caller consumes the head.
    /// During a drain (or for an answer not prepared) it goes through the general encoder,
    /// which says `Connection: close` when draining, and the connection ends after that.
    pub(super) fn answer_fixed(
        &mut self,
        index: usize,
        is_head: bool,
    ) -> Result<Step<H::Future>, Close> {
        let Conn { io, worker, wbuf, wpos, run, date, .. } = &mut *self;
        let Some(fixed) = worker.fixed(index) else {
            return Err(Close::Done);
        };
        let keep_alive = !worker.draining();
        // On plain TCP with nothing else queued the answer is counted, not copied: the flush
        // writes the run from the worker's copy (`fixed_run.rs`).
        if keep_alive
            && io.is_plain()
            && *wpos >= wbuf.len()
            && let Some(len) = fixed.h1_len(is_head)
            && run.extend(index, is_head, len)
        {
            return Ok(Step::Next);
        }
        if run.is_pending() {
            write_run(run, queue_only, worker, date, wbuf)?;
        }
        if keep_alive {
            if wbuf.capacity() == 0 {
                *wbuf = worker.buffers.take_write();
            }
            let date = date.get_or_insert_with(crate::server::clock::date);
            if fixed.write_h1(is_head, date, wbuf) {
                return Ok(Step::Next);
            }
        }
        let mut res = fixed.response();
        match self.encode_response(&mut res, is_head, Version::Http11, keep_alive)? {
            (None, _) => Ok(if keep_alive { Step::Next } else { Step::Stop }),
            // Prepared answers have short bodies, copied whole; never streamed.
            (Some(_), _) => Err(Close::Done),
        }
    }
}
