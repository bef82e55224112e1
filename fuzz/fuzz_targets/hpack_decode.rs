#![no_main]
//! The HPACK decoder on arbitrary blocks, several per input on one decoder (the first byte
//! picks the table setting, each later block is prefixed by a length byte; a length byte of
//! 0xff means "lower our setting" instead, 0xfe "the last block again"): never panics, and
//! the list stays within its budget and its memory bounded by it.
//!
//! A second decoder takes the same blocks but replays a repeated block whenever it says it
//! can (`Decoder::replay`): its lists and its table must stay those of the first.
use libfuzzer_sys::fuzz_target;
use peregrine::http2::hpack::{Decoder, FieldList};

const BUDGET: usize = 4096;

fn fields(list: &FieldList) -> Vec<(&[u8], &[u8], bool)> {
    list.iter().map(|f| (f.name, f.value, f.never_indexed)).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else { return };
    let setting = usize::from(first) * 32;
    let mut decoder = Decoder::new(setting);
    let mut list = FieldList::new(BUDGET);
    let mut replayer = Decoder::new(setting);
    let mut replayed = FieldList::new(BUDGET);
    let mut last: &[u8] = &[];
    while let Some((&len, tail)) = rest.split_first() {
        if len == 0xff {
            decoder.set_max_table_size(setting / 2);
            replayer.set_max_table_size(setting / 2);
            rest = tail;
            continue;
        }
        let block = if len == 0xfe {
            rest = tail;
            last
        } else {
            let n = usize::from(len).min(tail.len());
            let (block, tail) = tail.split_at(n);
            rest = tail;
            block
        };
        let repeat = block == last && replayer.replays();
        last = block;
        let result = decoder.decode(block, &mut list);
        if repeat {
            replayer.replay(&replayed);
            assert!(result.is_ok(), "replayed a block that does not decode");
        } else {
            assert_eq!(replayer.decode(block, &mut replayed).is_ok(), result.is_ok());
        }
        if result.is_err() {
            return; // a connection error: the connection (and this decoder) ends
        }
        assert!(fields(&list) == fields(&replayed), "replayed list differs");
        assert_eq!(list.malformed(), replayed.malformed());
        assert_eq!(list.too_large(), replayed.too_large());
        assert_eq!(decoder.table_len(), replayer.table_len());
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
