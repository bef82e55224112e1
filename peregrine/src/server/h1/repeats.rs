//! A worker's fixed answers, each repeated as many times as a run of them covers
//! (`fixed_run`), so a pipelined run is written from one copy. In a file of their own, apart
//! from the run's writing: the worker holds these copies and the writing reads the worker, so
//! in one file the two made an import loop.

use crate::date::ImfFixdate;
use crate::server::fixed::Fixed;

/// The most bytes a run covers (a longer batch goes on in the write buffer), and so about
/// the size of each repeated answer a worker keeps.
pub(super) const RUN_BYTES: usize = 8 * 1024;

/// A worker's fixed answers, each repeated as many times as a run covers, with one Date.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// By answer and method: `2 * index + is_head`.
    by_answer: Vec<Option<Repeat>>,
}

#[derive(Debug)]
struct Repeat {
    date: ImfFixdate,
    /// The answer, `copies` times.
    bytes: Vec<u8>,
    copies: usize,
}

impl Repeats {
    /// `count` copies of `fixed`'s answer (its head alone when `is_head`) with `date`, or
    /// `None` when it is not prepared (see [`Fixed::write_h1`]).
    pub(crate) fn get(
        &mut self,
        index: usize,
        fixed: &Fixed,
        is_head: bool,
        date: &ImfFixdate,
        count: usize,
    ) -> Option<&[u8]> {
        let len = fixed.h1_len(is_head)?;
        let at = 2 * index + usize::from(is_head);
        if self.by_answer.len() <= at {
            self.by_answer.resize_with(at + 1, || None);
        }
        let repeat = &mut self.by_answer[at];
        let fresh = repeat.as_ref().is_some_and(|r| r.date == *date && r.copies >= count);
        if !fresh {
            // The run's bound, so a run never outgrows its copy; at least `count` anyway.
            let copies = (RUN_BYTES / len.max(1)).max(count);
            let mut bytes = repeat.take().map(|r| r.bytes).unwrap_or_default();
            bytes.clear();
            for _ in 0..copies {
                fixed.write_h1(is_head, date, &mut bytes);
            }
            *repeat = Some(Repeat { date: *date, bytes, copies });
        }
        repeat.as_ref().map(|r| &r.bytes[..count * len])
    }
}
