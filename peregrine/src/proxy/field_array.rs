//! A message's fields read once into an array on the stack: the proxy looks at a head's
//! fields several times (its `Connection` options, the forwarding fields received, the ones
//! passed on), and a server request's fields are found by scanning its lines, so each further
//! look would scan them again.

/// Fields held on the stack; a head with more goes on in a `Vec` (one allocation, for a rare
/// head).
pub(super) const STACK_FIELDS: usize = 48;

/// `(name, value)` pairs in order, on the stack up to `N` ([`STACK_FIELDS`] by default: each
/// slot costs its initialisation, so a head that is usually short takes fewer).
pub(super) struct FieldArray<'a, const N: usize = STACK_FIELDS> {
    stack: [(&'a str, &'a [u8]); N],
    n: usize,
    spill: Vec<(&'a str, &'a [u8])>,
}

impl<'a, const N: usize> FieldArray<'a, N> {
    pub(super) fn new() -> FieldArray<'a, N> {
        FieldArray { stack: [("", &[][..]); N], n: 0, spill: Vec::new() }
    }

    pub(super) fn push(&mut self, field: (&'a str, &'a [u8])) {
        match self.stack.get_mut(self.n) {
            Some(slot) if self.spill.is_empty() => {
                *slot = field;
                self.n += 1;
            }
            _ => {
                if self.spill.is_empty() {
                    self.spill.extend_from_slice(&self.stack[..self.n]);
                }
                self.spill.push(field);
            }
        }
    }

    /// Pushes every field of `iter` (built in place: the array is too large to move cheaply).
    pub(super) fn extend(&mut self, iter: impl IntoIterator<Item = (&'a str, &'a [u8])>) {
        for f in iter {
            self.push(f);
        }
    }

    /// Keeps the fields `keep` says yes to, in order, each asked once.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&(&'a str, &'a [u8])) -> bool) {
        if !self.spill.is_empty() {
            self.spill.retain(keep);
            return;
        }
        let mut kept = 0;
        for i in 0..self.n {
            if keep(&self.stack[i]) {
                self.stack[kept] = self.stack[i];
                kept += 1;
            }
        }
        self.n = kept;
    }

    pub(super) fn as_slice(&self) -> &[(&'a str, &'a [u8])] {
        if self.spill.is_empty() { &self.stack[..self.n] } else { &self.spill }
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
