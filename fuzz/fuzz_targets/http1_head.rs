#![no_main]
// PLACEHOLDER target: filled in with its module.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data;
});
