#![no_main]
//! The HPACK decoder on arbitrary blocks, several per input on one decoder (the first byte
//! picks the table setting, each later block is prefixed by a length byte; a length byte of
//! 0xff means "lower our setting" instead): never panics, and the list stays within its
//! budget and its memory bounded by it.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::{Decoder, FieldList};

const BUDGET: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else { return };
    let setting = usize::from(first) * 32;
    let mut decoder = Decoder::new(setting);
    let mut list = FieldList::new(BUDGET);
    while let Some((&len, tail)) = rest.split_first() {
        if len == 0xff {
            decoder.set_max_table_size(setting / 2);
            rest = tail;
            continue;
        }
        let n = usize::from(len).min(tail.len());
        let (block, tail) = tail.split_at(n);
        rest = tail;
        if decoder.decode(block, &mut list).is_err() {
            return; // a connection error: the connection (and this decoder) ends
        }
        let size: usize = list.iter().map(|f| f.name.len() + f.value.len() + 32).sum();
        assert!(size <= BUDGET, "list of {size} octets past a budget of {BUDGET}");
        assert!(
            list.arena_capacity() <= 2 * (BUDGET + setting) + 64,
            "arena {}",
            list.arena_capacity()
        );
        assert!(decoder.table_max_size() <= setting);
    }
});
