//! A message's fields read once into an array on the stack: the proxy looks at a head's
//! fields several times (its `Connection` options, the forwarding fields received, the ones
//! passed on), and a server request's fields are found by scanning its lines, so each further
//! look would scan them again.
//!
//! The slots start uninitialised: filling 48 slots of four words each, twice per proxied
//! request, cost more than the fields themselves (callgrind), so only the slots written are
//! ever read. The module's unsafe code is that bookkeeping: slots `..n` are initialised.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

/// One field: name and value.
type Field<'a> = (&'a str, &'a [u8]);

/// Fields held on the stack; a head with more goes on in a `Vec` (one allocation, for a rare
/// head).
pub(super) const STACK_FIELDS: usize = 48;

/// `(name, value)` pairs in order, on the stack up to `N` ([`STACK_FIELDS`] by default).
pub(super) struct FieldArray<'a, const N: usize = STACK_FIELDS> {
    /// Slots `..n` are initialised (while `spill` is empty; then `spill` holds every field).
    stack: [MaybeUninit<Field<'a>>; N],
    n: usize,
    spill: Vec<Field<'a>>,
}

impl<'a, const N: usize> FieldArray<'a, N> {
    #[inline(always)]
    pub(super) fn new() -> FieldArray<'a, N> {
        FieldArray { stack: [const { MaybeUninit::uninit() }; N], n: 0, spill: Vec::new() }
    }

    pub(super) fn push(&mut self, field: Field<'a>) {
        match self.stack.get_mut(self.n) {
            Some(slot) if self.spill.is_empty() => {
                slot.write(field);
                self.n += 1;
            }
            _ => {
                if self.spill.is_empty() {
                    let held = self.stack_fields().to_vec();
                    self.spill = held;
                }
                self.spill.push(field);
            }
        }
    }

    /// Pushes every field of `iter` (built in place: the array is too large to move cheaply).
    pub(super) fn extend(&mut self, iter: impl IntoIterator<Item = Field<'a>>) {
        for f in iter {
            self.push(f);
        }
    }

    /// Keeps the fields `keep` says yes to, in order, each asked once.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Field<'a>) -> bool) {
        if !self.spill.is_empty() {
            self.spill.retain(keep);
            return;
        }
        let mut kept = 0;
        for i in 0..self.n {
            let field = self.stack_fields()[i];
            if keep(&field) {
                // Slot `kept` <= `i` < `n`: written back into the initialised prefix.
                self.stack[kept].write(field);
                kept += 1;
            }
        }
        self.n = kept;
    }

    /// The fields on the stack.
    fn stack_fields(&self) -> &[Field<'a>] {
        let n = self.n.min(N);
        // SAFETY: slots `..n` were written by `push` or `retain` (the struct's invariant), and
        // `MaybeUninit<T>` has `T`'s layout, so they are `n` initialised fields in a row.
        unsafe { std::slice::from_raw_parts(self.stack.as_ptr().cast::<Field<'a>>(), n) }
    }

    pub(super) fn as_slice(&self) -> &[Field<'a>] {
        if self.spill.is_empty() { self.stack_fields() } else { &self.spill }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_on_the_stack_and_past_it() {
        let names: Vec<String> = (0..STACK_FIELDS + 3).map(|i| format!("f{i}")).collect();
        for count in [0, 1, STACK_FIELDS - 1, STACK_FIELDS, STACK_FIELDS + 1, STACK_FIELDS + 3] {
            let mut fields: FieldArray = FieldArray::new();
            fields.extend(names[..count].iter().map(|n| (n.as_str(), n.as_bytes())));
            let got: Vec<&str> = fields.as_slice().iter().map(|(n, _)| *n).collect();
            let want: Vec<&str> = names[..count].iter().map(String::as_str).collect();
            assert_eq!(got, want, "{count} fields");
            assert!(fields.as_slice().iter().all(|(n, v)| n.as_bytes() == *v));
            // Every other field kept, in order, each judged once.
            let mut asked = 0;
            fields.retain(|(n, _)| {
                asked += 1;
                n[1..].parse::<usize>().unwrap() % 2 == 0
            });
            assert_eq!(asked, count, "{count} fields");
            let got: Vec<&str> = fields.as_slice().iter().map(|(n, _)| *n).collect();
            let want: Vec<&str> = want.into_iter().step_by(2).collect();
            assert_eq!(got, want, "{count} fields retained");
        }
    }
}
