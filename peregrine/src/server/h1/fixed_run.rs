//! Consecutive fixed answers on a plain connection, sent from one prepared copy.
//!
//! A pipelined batch of requests for a fixed answer (a balancer's probes, a poller, a
//! benchmark) is answered with the same bytes again and again. Rather than copying each answer
//! into the connection's write buffer, the connection counts them ([`FixedRun`]) and its flush
//! writes them straight from the worker's copy of that answer repeated (`repeats::Repeats`,
//! rebuilt when the Date changes: once a second; the write is [`write_run`]). No copy per
//! answer, and no per-connection buffer written: for a connection that keeps its buffers
//! between batches, that buffer's lines are cold by the time it runs again.
//!
//! A run only starts when nothing else is queued, and anything else to be queued after it
//! first copies the run into the write buffer (`write_run` again, writing nothing), so the
//! bytes leave in the order the requests came (RFC 9112 §9.3.2).

use std::io;

use super::Close;
use super::repeats::RUN_BYTES;
use crate::date::ImfFixdate;
use crate::server::worker::Worker;

/// Fixed answers counted but not yet written: `count` times answer `index` (its head alone
/// when `is_head`). Eight bytes in every connection's future.
#[derive(Debug, Default)]
pub(super) struct FixedRun {
    index: u32,
    count: u16,
    is_head: bool,
}

impl FixedRun {
    /// Counts one more answer, if it extends the run (or starts one) and the run stays within
    /// [`RUN_BYTES`]; the caller has nothing else queued when it starts one.
    #[inline]
    pub(super) fn extend(&mut self, index: usize, is_head: bool, len: usize) -> bool {
        if self.count == 0 {
            let Ok(index) = u32::try_from(index) else {
                return false;
            };
            *self = FixedRun { index, count: 1, is_head };
            return true;
        }
        let same = self.index as usize == index && self.is_head == is_head;
        if same && (usize::from(self.count) + 1) * len <= RUN_BYTES {
            self.count += 1;
            return true;
        }
        false
    }

    /// Whether answers are counted and not yet written.
    #[inline]
    pub(super) fn is_pending(&self) -> bool {
        self.count != 0
    }

    /// Ends the run: its answers and how many.
    #[inline]
    pub(super) fn take(&mut self) -> Option<(usize, bool, usize)> {
        let count = std::mem::take(&mut self.count);
        (count != 0).then_some((self.index as usize, self.is_head, usize::from(count)))
    }
}

/// Writes `run` straight from the worker's repeated copy of its answer (with the batch's
/// `date`), as one call of `send` (a socket's write: the bytes it took, `WouldBlock` for none);
/// what it does not take is copied into `wbuf`, for a flush to finish with its write timeout.
/// With [`queue_only`] as `send` the whole run is copied into `wbuf`: something else is about
/// to be queued after it.
pub(super) fn write_run(
    run: &mut FixedRun,
    send: impl FnOnce(&[u8]) -> io::Result<usize>,
    worker: &Worker,
    date: &mut Option<ImfFixdate>,
    wbuf: &mut Vec<u8>,
) -> Result<(), Close> {
    let Some((index, is_head, count)) = run.take() else {
        return Ok(());
    };
    let Some(fixed) = worker.fixed(index) else {
        return Err(Close::Done);
    };
    let date = date.get_or_insert_with(crate::server::clock::date);
    let mut repeats = worker.repeats.borrow_mut();
    let Some(bytes) = repeats.get(index, fixed, is_head, date, count) else {
        return Err(Close::Done);
    };
    // `Ok(0)` for bytes to send: the connection takes no more (see `net::write`).
    let sent = match send(bytes) {
        Ok(0) if !bytes.is_empty() => return Err(Close::Io),
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
        Err(_) => return Err(Close::Io),
    };
    if let Some(rest) = bytes.get(sent..).filter(|rest| !rest.is_empty()) {
        if wbuf.capacity() == 0 {
            *wbuf = worker.buffers.take_write();
        }
        wbuf.extend_from_slice(rest);
    }
    Ok(())
}

/// The `send` of [`write_run`] that sends nothing: the run is queued whole.
pub(super) fn queue_only(_: &[u8]) -> io::Result<usize> {
    Err(io::ErrorKind::WouldBlock.into())
}

#[cfg(test)]
pub(super) mod tests {
    use http::header::{CONTENT_TYPE, HeaderValue};

    use super::*;
    use crate::response::Response;
    use crate::server::fixed::Fixed;
    use crate::server::h1::repeats::Repeats;

    fn date(secs: u64) -> ImfFixdate {
        crate::date::format_imf_fixdate(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + secs),
        )
    }

    pub(crate) fn fixed(body: String) -> Fixed {
        let res =
            Response::new(body).with_header(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        Fixed::new("/p", res).unwrap()
    }

    /// `count` answers written one by one, as the write buffer gets them.
    pub(crate) fn one_by_one(
        fixed: &Fixed,
        is_head: bool,
        date: &ImfFixdate,
        count: usize,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..count {
            assert!(fixed.write_h1(is_head, date, &mut out));
        }
        out
    }

    #[test]
    fn a_run_extends_while_the_same_answer_fits() {
        let len = 100;
        // (answers, whether each extends the run)
        type Case = (&'static [(usize, bool)], &'static [bool]);
        let cases: &[Case] = &[
            (&[(0, false), (0, false), (0, false)], &[true, true, true]),
            (&[(0, false), (1, false)], &[true, false]),
            (&[(0, false), (0, true)], &[true, false]),
            (&[(2, true), (2, true), (2, false)], &[true, true, false]),
        ];
        for (answers, want) in cases {
            let mut run = FixedRun::default();
            let got: Vec<bool> =
                answers.iter().map(|&(i, head)| run.extend(i, head, len)).collect();
            assert_eq!(&got, want, "{answers:?}");
        }
        // Bounded by RUN_BYTES: 81 answers of 100 bytes fit, the 82nd does not.
        let mut run = FixedRun::default();
        let fitted = (0..200).take_while(|_| run.extend(0, false, len)).count();
        assert_eq!(fitted, RUN_BYTES / len);
        assert_eq!(run.take(), Some((0, false, RUN_BYTES / len)));
        assert!(!run.is_pending());
        assert_eq!(run.take(), None);
        // An answer larger than the bound still runs alone.
        let mut run = FixedRun::default();
        assert!(run.extend(0, false, RUN_BYTES * 2));
        assert!(!run.extend(0, false, RUN_BYTES * 2));
    }

    #[test]
    fn repeated_answers_are_the_answers_written_one_by_one() {
        let small = fixed("Hello, World!".into());
        let large = fixed("x".repeat(RUN_BYTES + 5));
        let mut repeats = Repeats::default();
        for (index, fixed) in [(0, &small), (3, &large)] {
            for is_head in [false, true] {
                for secs in [0, 0, 1, 0] {
                    let d = date(secs);
                    for count in [1, 2, 7] {
                        let count = count.min(RUN_BYTES / fixed.h1_len(is_head).unwrap()).max(1);
                        let got = repeats.get(index, fixed, is_head, &d, count).unwrap();
                        assert_eq!(got, one_by_one(fixed, is_head, &d, count), "{index} {count}");
                    }
                }
            }
        }
        // A run as long as the bound allows is served from one build.
        let len = small.h1_len(false).unwrap();
        let most = RUN_BYTES / len;
        let got = repeats.get(0, &small, false, &date(2), most).unwrap();
        assert_eq!(got, one_by_one(&small, false, &date(2), most));
    }
}
