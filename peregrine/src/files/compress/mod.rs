//! Compression on the fly: which files, which codings at which levels, and the cache of
//! compressed copies.

mod cache;
mod encode;

use std::sync::Arc;

use bytes::Bytes;
use http::HeaderValue;

use super::cache::Repr;
use super::conditional::Validators;
use super::{Coding, FileSpan};
use crate::text::Text;
use cache::CompressedCache;

/// How [`ServeDir`](super::ServeDir) compresses files on the fly.
///
/// A file is compressed when its type is compressible (`text/*`, JavaScript, JSON, XML and
/// `+json`/`+xml` types, SVG, wasm), its size is within [`min_size`](Self::min_size) and
/// [`max_size`](Self::max_size), no precompressed sibling matches the client's
/// `Accept-Encoding`, and the client accepts one of the enabled codings (its preference
/// decides; on equal weights brotli, then zstd, then gzip). The answer then carries
/// `Content-Encoding`, `Vary: Accept-Encoding` (sent for every answer about such a file,
/// compressed or not) and its own strong `ETag`: the identity tag with the coding and level
/// appended (`"…-gz6"`), so each encoding is a different representation (RFC 9110 §8.8.3).
///
/// Compressing runs on the thread answering and blocks it for about as long as the file is
/// large (tens of milliseconds for a few MiB at the default levels): that is why files above
/// `max_size` (default 4 MiB) go out uncompressed unless a precompressed sibling exists, and
/// why every result is kept in a cache (default 64 MiB; least recently used copies go first),
/// keyed by the file's path, its validators, the coding and the level: a hot file is
/// compressed once, and a changed file is compressed anew, never answered from the old copy.
///
/// **Ranges** (RFC 9110 §14): a range request is answered from the compressed bytes, with the
/// compressed representation's `ETag`, which is strong because the bytes are a deterministic
/// function of the file's version, the coding and its level. RFC 9110 §14.1.1 defines ranges
/// over the *selected representation*, here the encoded one, so `Content-Range` counts
/// compressed bytes and an `If-Range` with the identity tag does not match (the whole
/// representation is sent, §13.1.5).
///
/// The codings are the crate's features `gzip` (flate2), `brotli` and `zstd`, all on by
/// default; a coding whose feature is off is never used.
///
/// # Examples
/// ```
/// use peregrine::files::{Coding, Compression, ServeDir};
/// let files = ServeDir::new(std::env::temp_dir())?.compression(
///     Compression::default()
///         .level(Coding::Gzip, Some(9))
///         .level(Coding::Zstd, None) // zstd off
///         .max_size(1 << 20),
/// );
/// # let _ = files;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compression {
    /// Levels indexed like `Coding::ALL` (brotli, zstd, gzip); `None` is off.
    levels: [Option<u32>; 3],
    min_size: u64,
    max_size: u64,
    cache_bytes: usize,
}

impl Default for Compression {
    /// Brotli 5, zstd 3, gzip 6 (each where its feature is on); files from 1 KiB to
    /// 4 MiB; a 64 MiB cache.
    fn default() -> Compression {
        let on = |c: Coding, level: u32| encode::available(c).then_some(level);
        Compression {
            levels: [on(Coding::Brotli, 5), on(Coding::Zstd, 3), on(Coding::Gzip, 6)],
            min_size: 1024,
            max_size: 4 << 20,
            cache_bytes: 64 << 20,
        }
    }
}

impl Compression {
    /// No coding enabled (the same as not calling
    /// [`ServeDir::compression`](super::ServeDir::compression)).
    pub fn off() -> Compression {
        Compression { levels: [None; 3], ..Compression::default() }
    }

    /// Enables `coding` at `level` (clamped to gzip 1–9, brotli 0–11, zstd 1–19), or turns it
    /// off with `None`. A coding whose crate feature is off stays off.
    pub fn level(mut self, coding: Coding, level: Option<u32>) -> Compression {
        let (lo, hi) = encode::level_range(coding);
        self.levels[coding.index()] =
            level.map(|l| l.clamp(lo, hi)).filter(|_| encode::available(coding));
        self
    }

    /// Files smaller than this are sent as they are (default 1 KiB: a smaller response fits
    /// in one TCP segment either way, so compressing saves no round trip, while the answer
    /// would have to carry `Vary: Accept-Encoding` and a cache would keep two copies).
    pub fn min_size(mut self, bytes: u64) -> Compression {
        self.min_size = bytes;
        self
    }

    /// Files larger than this are sent as they are, unless a precompressed sibling exists
    /// (default 4 MiB): the bound on how long one compression holds a worker.
    pub fn max_size(mut self, bytes: u64) -> Compression {
        self.max_size = bytes;
        self
    }

    /// Memory the compressed copies may hold in all (default 64 MiB).
    pub fn cache_bytes(mut self, bytes: usize) -> Compression {
        self.cache_bytes = bytes;
        self
    }

    /// The level of `coding`, if enabled.
    pub fn level_of(&self, coding: Coding) -> Option<u32> {
        self.levels[coding.index()]
    }

    /// See [`Compression::max_size`].
    pub fn max_size_bytes(&self) -> u64 {
        self.max_size
    }

    /// See [`Compression::cache_bytes`].
    pub fn cache_size_bytes(&self) -> usize {
        self.cache_bytes
    }

    /// Whether any coding is enabled.
    pub fn is_on(&self) -> bool {
        self.levels.iter().any(Option::is_some)
    }
}

/// The settings and the cache, shared by clones of a `ServeDir`.
#[derive(Debug)]
pub(crate) struct Compressor {
    pub(crate) settings: Compression,
    cache: CompressedCache,
}

impl Compressor {
    pub(crate) fn new(settings: Compression) -> Arc<Compressor> {
        Arc::new(Compressor { settings, cache: CompressedCache::new(settings.cache_bytes) })
    }

    /// Whether a file of `len` bytes is in the size window.
    pub(crate) fn fits(&self, len: u64) -> bool {
        (self.settings.min_size..=self.settings.max_size).contains(&len)
    }

    /// The compressed representation of `identity` (the current version of the file at
    /// `path`), from the cache or compressed now; `None` when it cannot be read or the coding
    /// is off.
    pub(crate) fn representation(
        &self,
        path: &std::path::Path,
        identity: &Repr,
        coding: Coding,
    ) -> Option<Repr> {
        let level = self.settings.level_of(coding)?;
        let id_tag = &identity.validators.etag;
        let (bytes, tag) = match self.cache.get(path, id_tag, coding, level) {
            Some(hit) => hit,
            None => {
                let source = match (&identity.contents, &identity.file) {
                    (Some(all), _) => all.clone(),
                    (None, Some(file)) => {
                        let len = usize::try_from(identity.len).ok()?;
                        FileSpan::new(file.clone(), 0, identity.len).read_chunk(len).ok()??
                    }
                    (None, None) => return None,
                };
                let bytes = Bytes::from(encode::compress(coding, level, &source)?.ok()?);
                let tag = coded_tag(id_tag, coding, level)?;
                self.cache.insert(path, id_tag, coding, level, bytes.clone(), tag.clone());
                (bytes, tag)
            }
        };
        Some(Repr {
            file: None,
            len: bytes.len() as u64,
            modified: identity.modified,
            validators: Validators { etag: tag, ..identity.validators.clone() },
            contents: Some(bytes),
        })
    }
}

/// `"abc"` → `"abc-gz6"`: the identity tag with the coding and level, still strong.
fn coded_tag(identity: &HeaderValue, coding: Coding, level: u32) -> Option<HeaderValue> {
    let inner = identity.as_bytes().strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let mut t = Text::<96>::new();
    std::fmt::Write::write_fmt(
        &mut t,
        format_args!("\"{}{}{level}\"", std::str::from_utf8(inner).ok()?, coding.tag_suffix()),
    )
    .ok()?;
    HeaderValue::from_bytes(t.as_bytes()).ok()
}

/// Whether a media type (a `Content-Type` value) is worth compressing: text and the
/// structured text types, SVG and wasm. Images, audio, video, archives and fonts in WOFF are
/// compressed already.
pub(crate) fn compressible(content_type: &HeaderValue) -> bool {
    let t = content_type.as_bytes();
    let essence = t.split(|&b| b == b';').next().unwrap_or_default();
    essence.starts_with(b"text/")
        || essence.ends_with(b"+json")
        || essence.ends_with(b"+xml")
        || matches!(
            essence,
            b"application/javascript"
                | b"application/json"
                | b"application/xml"
                | b"application/wasm"
                | b"application/x-javascript"
                | b"application/ecmascript"
                | b"application/manifest+json"
                | b"application/x-ndjson"
                | b"font/ttf"
                | b"font/otf"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressible_types() {
        struct Case {
            input: &'static str,
            expect: bool,
        }
        let cases = [
            Case { input: "text/html; charset=utf-8", expect: true },
            Case { input: "text/javascript; charset=utf-8", expect: true },
            Case { input: "text/css; charset=utf-8", expect: true },
            Case { input: "application/json; charset=utf-8", expect: true },
            Case { input: "image/svg+xml; charset=utf-8", expect: true },
            Case { input: "application/wasm", expect: true },
            Case { input: "application/ld+json", expect: true },
            Case { input: "image/png", expect: false },
            Case { input: "application/gzip", expect: false },
            Case { input: "application/octet-stream", expect: false },
            Case { input: "font/woff2", expect: false },
            Case { input: "video/mp4", expect: false },
        ];
        for c in cases {
            assert_eq!(compressible(&HeaderValue::from_static(c.input)), c.expect, "{}", c.input);
        }
    }

    #[test]
    fn coded_tags_stay_strong_and_distinct() {
        let id = HeaderValue::from_static("\"1f-c-17\"");
        assert_eq!(coded_tag(&id, Coding::Gzip, 6).unwrap(), "\"1f-c-17-gz6\"");
        assert_eq!(coded_tag(&id, Coding::Brotli, 11).unwrap(), "\"1f-c-17-br11\"");
        assert_eq!(coded_tag(&id, Coding::Zstd, 3).unwrap(), "\"1f-c-17-zst3\"");
        assert!(coded_tag(&HeaderValue::from_static("W/\"x\""), Coding::Gzip, 6).is_none());
    }

    #[test]
    fn levels_clamp_and_switch_off() {
        let c = Compression::default()
            .level(Coding::Gzip, Some(42))
            .level(Coding::Brotli, Some(0))
            .level(Coding::Zstd, None);
        assert_eq!(c.level_of(Coding::Gzip), encode::available(Coding::Gzip).then_some(9));
        assert_eq!(c.level_of(Coding::Brotli), encode::available(Coding::Brotli).then_some(0));
        assert_eq!(c.level_of(Coding::Zstd), None);
        assert!(!Compression::off().is_on());
    }
}
