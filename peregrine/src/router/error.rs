//! Errors of the router: rejected templates, unmatched paths, undecodable parameters.

use std::fmt;

/// Why a template was rejected by [`Tree::insert`](super::Tree::insert) and friends.
///
/// Conflicts name both templates: the one being inserted and the one already in the table.
///
/// # Examples
/// ```
/// use peregrine::router::{Conflict, InsertError, Tree};
/// let mut tree = Tree::new();
/// tree.insert("/users/{id}", 1).unwrap();
/// let err = tree.insert("/users/{name}", 2).unwrap_err();
/// assert_eq!(err.conflict(), Some(Conflict::ParamName));
/// assert_eq!(
///     err.to_string(),
///     "route `/users/{name}` conflicts with `/users/{id}`: different parameter names at the same position"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertError {
    /// The template does not follow the grammar in the [module docs](super).
    Malformed {
        /// The rejected template.
        template: Box<str>,
        /// Byte offset in `template` where the problem was found.
        at: usize,
        /// What is wrong.
        reason: Malformed,
    },
    /// The template is well formed but cannot coexist with a route already in the table.
    Conflict {
        /// The rejected template.
        template: Box<str>,
        /// The template already in the table that it collides with.
        with: Box<str>,
        /// Which rule the pair breaks.
        kind: Conflict,
    },
}

impl InsertError {
    /// The conflict rule broken, or `None` for a malformed template.
    pub fn conflict(&self) -> Option<Conflict> {
        match self {
            InsertError::Conflict { kind, .. } => Some(*kind),
            InsertError::Malformed { .. } => None,
        }
    }

    /// The grammar rule broken, or `None` for a conflict.
    pub fn malformed(&self) -> Option<Malformed> {
        match self {
            InsertError::Malformed { reason, .. } => Some(*reason),
            InsertError::Conflict { .. } => None,
        }
    }

    pub(crate) fn malformed_at(template: &str, at: usize, reason: Malformed) -> Self {
        InsertError::Malformed { template: template.into(), at, reason }
    }
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::Malformed { template, at, reason } => {
                write!(f, "malformed route `{template}` at byte {at}: {reason}")
            }
            InsertError::Conflict { template, with, kind } => {
                write!(f, "route `{template}` conflicts with `{with}`: {kind}")
            }
        }
    }
}

impl std::error::Error for InsertError {}

/// The grammar rules a template can break (see the [module docs](super)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Malformed {
    /// The template (or nesting prefix) does not start with `/`.
    MissingLeadingSlash,
    /// A `{` without its closing `}` in the same segment.
    UnclosedBrace,
    /// A lone `}` in a static segment (write `}}` for a literal brace).
    UnmatchedClosingBrace,
    /// `{}` or `{*}`.
    EmptyName,
    /// A parameter name with a byte outside `A-Z a-z 0-9 _ - .`.
    InvalidName,
    /// A parameter that is not the whole segment, such as `/{id}.json`.
    PartialSegment,
    /// `{*name}` anywhere but the last segment.
    CatchAllNotLast,
    /// The same parameter name twice in one template.
    DuplicateName,
    /// A byte that cannot appear in a request path (RFC 3986 §3.3 `pchar`), or `%` not
    /// followed by two hex digits (RFC 3986 §2.1).
    InvalidByte,
    /// More segments than [`MAX_SEGMENTS`](super::MAX_SEGMENTS).
    TooManySegments,
    /// The table would exceed 4 GiB of template text or 2^32 nodes.
    TooLarge,
    /// A nesting prefix ending in `/` or containing a catch-all.
    InvalidPrefix,
    /// An extension method that is not an RFC 9110 §5.6.2 `token`.
    InvalidMethod,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Malformed::MissingLeadingSlash => "must start with `/`",
            Malformed::UnclosedBrace => "unclosed `{` (write `{{` for a literal brace)",
            Malformed::UnmatchedClosingBrace => "unmatched `}` (write `}}` for a literal brace)",
            Malformed::EmptyName => "empty parameter name",
            Malformed::InvalidName => "parameter names use only `A-Z a-z 0-9 _ - .`",
            Malformed::PartialSegment => "a parameter must be a whole segment",
            Malformed::CatchAllNotLast => "a catch-all must be the last segment",
            Malformed::DuplicateName => "parameter name used twice",
            Malformed::InvalidByte => "byte not allowed in a path (RFC 3986 §3.3)",
            Malformed::TooManySegments => "too many segments",
            Malformed::TooLarge => "route table too large",
            Malformed::InvalidPrefix => "a prefix must not end with `/` or hold a catch-all",
            Malformed::InvalidMethod => "method is not a token (RFC 9110 §5.6.2)",
        })
    }
}

/// The conflict rules (see the [module docs](super)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Conflict {
    /// The same route (same segments, same names) is already in the table.
    Duplicate,
    /// A parameter at the same position already has another name.
    ParamName,
    /// A catch-all and a parameter at the same position: both would match one segment.
    CatchAllParam,
    /// The route already has a value for this method ([`MethodRouter`](super::MethodRouter)).
    Method,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Conflict::Duplicate => "duplicate route",
            Conflict::ParamName => "different parameter names at the same position",
            Conflict::CatchAllParam => "a catch-all and a parameter at the same position",
            Conflict::Method => "method already routed",
        })
    }
}

/// No route matches the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotFound;

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no route matches the path")
    }
}

impl std::error::Error for NotFound {}

/// Why a parameter could not be percent-decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The route has no parameter of that name.
    Missing,
    /// `%` not followed by two hex digits (RFC 3986 §2.1), at this byte offset of the value.
    InvalidPercent {
        /// Byte offset of the `%` in the raw value.
        at: usize,
    },
    /// The decoded bytes are not UTF-8.
    InvalidUtf8,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Missing => f.write_str("no such parameter"),
            DecodeError::InvalidPercent { at } => {
                write!(f, "`%` at byte {at} is not followed by two hex digits")
            }
            DecodeError::InvalidUtf8 => f.write_str("decoded parameter is not UTF-8"),
        }
    }
}

impl std::error::Error for DecodeError {}
