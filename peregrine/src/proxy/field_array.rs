//! A message's fields read once into an array on the stack: the proxy looks at a head's
//! fields several times (its `Connection` options, the forwarding fields received, the ones
//! passed on), and a server request's fields are found by scanning its lines, so each further
//! look would scan them again.

/// Fields held on the stack; a head with more goes on in a `Vec` (one allocation, for a rare
/// head).
pub(super) const STACK_FIELDS: usize = 48;

/// `(name, value)` pairs in order, on the stack up to [`STACK_FIELDS`].
pub(super) struct FieldArray<'a> {
    stack: [(&'a str, &'a [u8]); STACK_FIELDS],
    n: usize,
    spill: Vec<(&'a str, &'a [u8])>,
}

impl<'a> FieldArray<'a> {
    pub(super) fn new() -> FieldArray<'a> {
        FieldArray { stack: [("", &[][..]); STACK_FIELDS], n: 0, spill: Vec::new() }
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
            let mut fields = FieldArray::new();
            fields.extend(names[..count].iter().map(|n| (n.as_str(), n.as_bytes())));
            let got: Vec<&str> = fields.as_slice().iter().map(|(n, _)| *n).collect();
            let want: Vec<&str> = names[..count].iter().map(String::as_str).collect();
            assert_eq!(got, want, "{count} fields");
            assert!(fields.as_slice().iter().all(|(n, v)| n.as_bytes() == *v));
        }
    }
}
