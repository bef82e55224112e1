//! Answering from a resolved regular file: the representation (identity, a precompressed
//! sibling, or one compressed on the fly), preconditions, ranges.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::cache::{self, Repr, Resolved};
use super::conditional::{self, Conditions, Precondition, Validators};
use super::range::{self, RangeOutcome};
use super::resolve::{self, Opened};
use super::{
    Coding, FileBody, FileReply, FileRequest, FileSpan, ServeDir, compress, content_range,
    content_type, encoding,
};

impl ServeDir {
    /// Gathers what answering needs about a regular file: its representations and type.
    pub(super) fn resolve_file(&self, full: &Path, opened: Opened) -> Resolved {
        let inline = self.cache.is_some();
        let mut siblings = [None, None, None];
        if self.precompressed {
            for (sibling, c) in siblings.iter_mut().zip(Coding::ALL) {
                let mut p = full.as_os_str().to_owned();
                p.push(c.extension());
                *sibling =
                    match resolve::open_beneath(&self.root, Path::new(&p), self.hide_dotfiles) {
                        Ok(o) if o.meta.is_file() => Some(repr(o, Some(c), inline)),
                        _ => None,
                    };
            }
        }
        let content_type = content_type::value_for_path(full);
        Resolved {
            compressible: compress::compressible(&content_type),
            content_type,
            real: opened.real.clone(),
            identity: repr(opened, None, inline),
            siblings,
        }
    }

    /// Answers from a resolved file: sibling choice, preconditions, range. With `check` (the
    /// resolution came from the cache), true with the answer when the file turned out to have
    /// changed since.
    pub(super) fn answer(
        &self,
        req: &FileRequest<'_>,
        head: bool,
        resolved: &Resolved,
        check: bool,
    ) -> (FileReply, bool) {
        // RFC 9110 §12.5.3: the best acceptable coding that has a sibling, else identity.
        let preferred = encoding::preferred(req.accept_encoding);
        let (coding, rep) = preferred
            .into_iter()
            .flatten()
            .find_map(|c| resolved.sibling(c).map(|r| (Some(c), r)))
            .unwrap_or((None, &resolved.identity));
        // A file sent from its descriptor is checked against it (one fstat): a file changed in
        // place since it was resolved (truncated, appended to, rewritten) goes out with its
        // current length and validators rather than stale ones, which would cut the response
        // short or promise bytes that are not there. Only a file that changes while it is sent
        // can still end the connection early.
        let current = rep.file.as_ref().filter(|_| check).and_then(|file| {
            let meta = file.metadata().ok()?;
            let same = meta.len() == rep.len && meta.modified().ok() == rep.modified;
            (!same).then(|| Repr {
                file: Some(file.clone()),
                len: meta.len(),
                modified: meta.modified().ok(),
                validators: Validators::from_meta(&meta, coding),
                contents: None,
            })
        });
        let changed = current.is_some();
        let rep = current.as_ref().unwrap_or(rep);
        // RFC 9110 §12.5.5: the answer varies with Accept-Encoding whenever a sibling exists or
        // the file could be compressed on the fly, whether or not that happens this time.
        let mut vary = resolved.has_siblings();
        // No sibling chosen: compress on the fly with the best acceptable enabled coding.
        let compressed = match (&self.compress, coding) {
            (Some(z), None) if resolved.compressible && z.fits(rep.len) => {
                vary = true;
                preferred
                    .into_iter()
                    .flatten()
                    .find(|&c| z.settings.level_of(c).is_some())
                    .and_then(|c| Some((c, z.representation(&resolved.real, rep, c)?)))
            }
            _ => None,
        };
        let (coding, rep) = match &compressed {
            Some((c, r)) => (Some(*c), r),
            None => (coding, rep),
        };
        (self.answer_with(req, head, resolved, coding, rep, vary), changed)
    }

    fn answer_with(
        &self,
        req: &FileRequest<'_>,
        head: bool,
        resolved: &Resolved,
        coding: Option<Coding>,
        rep: &Repr,
        vary: bool,
    ) -> FileReply {
        let len = rep.len;

        let mut r = FileReply::new(200);
        r.validators = Some(rep.validators.clone());
        r.cache_control = self.cache_control.clone();
        r.vary_accept_encoding = vary;
        r.accept_ranges = true;

        let conditions = Conditions {
            if_match: req.if_match,
            if_unmodified_since: req.if_unmodified_since,
            if_none_match: req.if_none_match,
            if_modified_since: req.if_modified_since,
        };
        match conditional::evaluate(&conditions, &rep.validators) {
            Precondition::Proceed => {}
            Precondition::NotModified => {
                // RFC 9110 §15.4.5: a 304 carries the validators, Cache-Control and Vary a 200
                // would, and no content. §8.6: its Content-Length, if any, must be the 200's,
                // which is what the length reported here is.
                r.status = 304;
                r.content_length = Some(len);
                return r;
            }
            Precondition::Failed => {
                r.status = 412;
                r.content_length = Some(0);
                return r;
            }
        }
        r.content_type = Some(resolved.content_type.clone());
        r.content_encoding = coding;

        // RFC 9110 §14.2: range handling is defined for GET only; a Range on HEAD is ignored.
        // §13.1.5: a false If-Range means the whole representation is sent.
        let outcome = match req.range {
            Some(range)
                if !head
                    && req
                        .if_range
                        .is_none_or(|ir| conditional::if_range_holds(ir, &rep.validators)) =>
            {
                range::evaluate(range, len)
            }
            _ => RangeOutcome::Full,
        };
        let (offset, count) = match outcome {
            RangeOutcome::Full => (0, len),
            RangeOutcome::Partial { start, end } => {
                r.status = 206;
                r.content_range = content_range(format_args!("bytes {start}-{end}/{len}"));
                (start, end - start + 1)
            }
            RangeOutcome::Unsatisfiable => {
                // RFC 9110 §15.5.17: 416 with the current length in `Content-Range: bytes */len`.
                r.status = 416;
                r.content_range = content_range(format_args!("bytes */{len}"));
                r.content_type = None;
                r.content_encoding = None;
                r.content_length = Some(0);
                return r;
            }
        };
        r.content_length = Some(count);
        if head || count == 0 {
            return r;
        }
        r.body = match (&rep.contents, &rep.file) {
            (Some(all), _) => {
                // Offsets are below `len`, which is the length of `all`.
                let (a, b) = (offset as usize, (offset + count) as usize);
                FileBody::Bytes(all.slice(a..b.min(all.len())))
            }
            (None, Some(file)) => FileBody::File(FileSpan::new(file.clone(), offset, count)),
            (None, None) => FileBody::Empty,
        };
        r
    }
}

/// A representation from an opened file; with `inline` (the cache is on), a small file is
/// read into memory now and its descriptor closed.
fn repr(o: Opened, coding: Option<Coding>, inline: bool) -> Repr {
    let validators = Validators::from_meta(&o.meta, coding);
    let len = o.meta.len();
    let modified = o.meta.modified().ok();
    let file = Arc::new(o.file);
    if inline && len <= cache::INLINE_MAX {
        let contents = if len == 0 {
            Ok(Some(Bytes::new()))
        } else {
            FileSpan::new(file.clone(), 0, len).read_chunk(len as usize)
        };
        if let Ok(Some(all)) = contents {
            return Repr { file: None, len, modified, validators, contents: Some(all) };
        }
        // A read error, or a file that shrank meanwhile: read at answer time instead, where
        // the error ends the connection.
    }
    Repr { file: Some(file), len, modified, validators, contents: None }
}
