//! One call per coding: bytes in, compressed bytes out (each coding behind its feature).

use std::io;

use super::super::Coding;

/// Compresses `input` with `coding` at `level`, or `None` when that coding was not built in.
pub(crate) fn compress(coding: Coding, level: u32, input: &[u8]) -> Option<io::Result<Vec<u8>>> {
    match coding {
        #[cfg(feature = "gzip")]
        Coding::Gzip => Some(gzip(level, input)),
        #[cfg(feature = "brotli")]
        Coding::Brotli => Some(brotli(level, input)),
        #[cfg(feature = "zstd")]
        Coding::Zstd => Some(zstd::bulk::compress(input, level as i32)),
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (level, input);
            None
        }
    }
}

/// Whether `coding` was built in (its feature is on).
pub(crate) fn available(coding: Coding) -> bool {
    match coding {
        Coding::Gzip => cfg!(feature = "gzip"),
        Coding::Brotli => cfg!(feature = "brotli"),
        Coding::Zstd => cfg!(feature = "zstd"),
    }
}

/// The levels each coding takes; a level outside is clamped into it.
pub(crate) fn level_range(coding: Coding) -> (u32, u32) {
    match coding {
        Coding::Gzip => (1, 9),
        Coding::Brotli => (0, 11),
        Coding::Zstd => (1, 19),
    }
}

#[cfg(feature = "gzip")]
fn gzip(level: u32, input: &[u8]) -> io::Result<Vec<u8>> {
    use std::io::Write;
    let out = Vec::with_capacity(input.len() / 3 + 64);
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(level));
    enc.write_all(input)?;
    enc.finish()
}

#[cfg(feature = "brotli")]
fn brotli(level: u32, input: &[u8]) -> io::Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: level as i32,
        // A window as large as the input needs (at most 4 MiB by default), 2^10 at least.
        lgwin: (input.len().max(1 << 10).next_power_of_two().trailing_zeros() as i32).clamp(10, 24),
        size_hint: input.len(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(input.len() / 3 + 64);
    brotli::BrotliCompress(&mut &input[..], &mut out, &params)?;
    Ok(out)
}
