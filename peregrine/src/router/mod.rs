//! Routing: URI templates to values, by path segments, with parameters, a catch-all, conflict
//! detection at insert, and per-method dispatch. Sans-I/O: plain values, no sockets, no clocks.
//!
//! [`Tree<T>`] maps paths to values; [`MethodRouter<T>`] adds one value per method and answers
//! 404, 405 (with `Allow`), `OPTIONS`, `HEAD` and the optional trailing-slash redirect. Both are
//! generic over the stored value, so the application-level router stores handlers as `T`.
//!
//! # Templates
//!
//! ```text
//! template = "/" segment *( "/" segment )
//! segment  = static / "{" name "}" / "{*" name "}"
//! static   = *( pchar / "{{" / "}}" )        ; RFC 3986 §3.3 pchar, may be empty
//! name     = 1*( ALPHA / DIGIT / "_" / "-" / "." )
//! ```
//!
//! - A **static** segment matches a path segment with exactly the same bytes. Paths are
//!   compared raw, as sent: no percent-decoding, no case folding, no `.`/`..` removal, so `%41`
//!   and `A` differ and `/a//b` has an empty middle segment. `{{` and `}}` stand for literal
//!   braces. A byte that cannot appear in a request path (space, `?`, `#`, controls, non-ASCII,
//!   `%` without two hex digits) is rejected: such a route could never match.
//! - A **parameter** `{name}` is a whole segment and matches any *non-empty* segment.
//!   Parameters inside a segment (`/{id}.json`, `/v{n}`) are rejected; route `/{id}` and split
//!   in the handler instead.
//! - A **catch-all** `{*name}` is the last segment and matches the *non-empty* rest of the path,
//!   slashes included: `/files/{*p}` matches `/files/a/b` with `p = "a/b"`, not `/files/`.
//! - A trailing slash is a segment of its own: `/a` and `/a/` are different routes (see the
//!   redirect below). The root `/` is one empty static segment.
//! - At most [`MAX_SEGMENTS`] segments; parameter names are unique within a template.
//!
//! The path given to [`Tree::at`] is the path of the request target (origin-form, RFC 9112
//! §3.2.1) without the query. Anything not starting with `/` is not found. Any `&str` is
//! accepted: lookup never panics.
//!
//! # Matching priority
//!
//! Segment by segment from the left, a **static** segment beats a **parameter**, which beats
//! a **catch-all**; when the preferred choice leads to a dead end, matching backtracks to the
//! next one. Equivalently: of all the routes that match a path, the winner is the one whose
//! sequence of segment kinds is smallest lexicographically with static < parameter <
//! catch-all.
//!
//! ```
//! use peregrine::router::Tree;
//! let mut t = Tree::new();
//! t.insert("/users/new", 1).unwrap();
//! t.insert("/users/{id}", 2).unwrap();
//! t.insert("/a/b/c", 3).unwrap();
//! t.insert("/a/{x}/d", 4).unwrap();
//! t.insert("/{*path}", 5).unwrap();
//! assert_eq!(*t.at("/users/new").unwrap().value, 1);
//! assert_eq!(*t.at("/users/old").unwrap().value, 2);
//! // The static `b` leads to a dead end at `d`: back up and take the parameter.
//! assert_eq!(*t.at("/a/b/d").unwrap().value, 4);
//! // Nothing else matches: the catch-all does.
//! assert_eq!(t.at("/a/b/e").unwrap().params.get("path"), Some("a/b/e"));
//! ```
//!
//! # Conflicts
//!
//! Inserting a route fails, leaving the table unchanged, with an [`InsertError`] naming the new
//! template and the one already there, when:
//!
//! - [`Conflict::Duplicate`]: the same route is already present;
//! - [`Conflict::ParamName`]: at a position where an existing route (with the same segments
//!   before it) has a parameter or catch-all, the new one has one with another name —
//!   `/users/{id}` and `/users/{name}/posts` cannot coexist;
//! - [`Conflict::CatchAllParam`]: at the same position one route has a parameter and the other a
//!   catch-all (`/f/{id}` and `/f/{*rest}`): both would match a one-segment rest;
//! - [`Conflict::Method`] ([`MethodRouter`]): the route already has a value for the method.
//!
//! Static segments never conflict with parameters or catch-alls: the priority rule decides.
//! Malformed templates are rejected with a [`Malformed`] reason and a byte offset.
//!
//! ```
//! use peregrine::router::{Conflict, Malformed, Tree};
//! let mut t = Tree::new();
//! t.insert("/f/{id}", ()).unwrap();
//! let e = t.insert("/f/{*rest}", ()).unwrap_err();
//! assert_eq!(e.conflict(), Some(Conflict::CatchAllParam));
//! assert_eq!(t.insert("/f/{id}", ()).unwrap_err().conflict(), Some(Conflict::Duplicate));
//! assert_eq!(t.insert("/g/{id", ()).unwrap_err().malformed(), Some(Malformed::UnclosedBrace));
//! assert_eq!(t.insert("/{*a}/b", ()).unwrap_err().malformed(), Some(Malformed::CatchAllNotLast));
//! ```
//!
//! # Parameters
//!
//! [`Params`] holds raw spans of the path; up to [`INLINE_PARAMS`] of them live inline, so a
//! lookup does not allocate. [`Params::decoded`] percent-decodes one value on request and checks
//! that it is UTF-8 (RFC 3986 §2.1).
//!
//! # Methods
//!
//! [`MethodRouter::resolve`] returns a [`Resolution`]:
//!
//! - `Found` when the route has a value for the method; `HEAD` uses `GET`'s value when it has
//!   none of its own (RFC 9110 §9.3.2);
//! - `Options` for `OPTIONS` on an existing path without its own `OPTIONS` value;
//! - `MethodNotAllowed` (405, RFC 9110 §15.5.6) when the path exists with other methods; its
//!   [`AllowSet`] renders the `Allow` value (always with `OPTIONS`, and `HEAD` with `GET`);
//! - `RedirectTrailingSlash` (308) when enabled, the path matches nothing, and the same path
//!   with the trailing slash toggled matches a route;
//! - `NotFound` (404) otherwise.
//!
//! # Mounting
//!
//! [`Tree::nest`] and [`MethodRouter::nest`] mount a router under a prefix: a nested `/r`
//! becomes `prefix/r` (and `/` becomes `prefix`), with every conflict rule applied.
//!
//! # Cost
//!
//! Nodes live in one arena, 32 bytes each; a node reached by a static segment holds that
//! segment's label. The static children of a node are stored together in one block of the
//! arena: one child is compared directly; several form a small open-addressed hash table of the
//! child nodes themselves, so a probe lands on the node the walk needs next (one cache line per
//! segment) and a node with 32,768 static children costs one probe, like a node with two. A
//! lookup scans each segment once, a word at a time, and, because each node stands for one
//! segment position, visits each node at most once even when it backtracks. So the work of a
//! lookup depends on the path, not on the number of routes; its time grows with the table only
//! through the caches (about 3x from 64 to 32,768 routes on the benchmark machine, where a bare
//! hash probe of the concrete paths grows 2.4–2.7x). Measured in `benches/router.rs`
//! (`cargo bench --bench router`): about 235 heap bytes per route at 32,768 routes.
//!

mod edges;
mod error;
mod methods;
mod params;
pub(crate) mod percent;
mod segment;
pub(crate) mod template;
mod tree;

pub use error::{Conflict, DecodeError, InsertError, Malformed, NotFound};
pub use methods::{AllowSet, Location, MethodRouter, Resolution};
pub use params::{INLINE_PARAMS, Params, ParamsIter};
pub use percent::percent_decode;
pub use template::MAX_SEGMENTS;
pub use tree::{Match, Tree};
