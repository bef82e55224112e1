//! The route parameters a [`Request`] carries: spans into its own path, plus the matched route's
//! names, so a handler reads them without the router and without an allocation.
//!
//! Values are `u16` spans relative to the request path (a head is at most 64 KiB). Names and
//! the template live in a [`RouteInfo`] that is interned once per distinct template for the
//! life of the process: a request holds an `&'static` to it, so setting the parameters copies a
//! pointer and a few spans — no reference count touched from several worker threads, no
//! allocation. The cost is that a template's text stays allocated after its router is dropped;
//! it is bounded by the number of distinct templates the program ever routes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::request::Request;
use crate::router::{DecodeError, INLINE_PARAMS, Params, percent_decode};

/// What the request side knows of a route: its template and its parameter names in order.
#[derive(Debug)]
pub(crate) struct RouteInfo {
    template: Box<str>,
    names: Box<[Box<str>]>,
}

impl RouteInfo {
    /// The interned info of `template`, which the router already accepted (its grammar is
    /// valid), creating it on first use.
    pub(crate) fn intern(template: &str) -> &'static RouteInfo {
        static TABLE: OnceLock<Mutex<HashMap<Box<str>, &'static RouteInfo>>> = OnceLock::new();
        let table = TABLE.get_or_init(Default::default);
        // A poisoned lock only means another thread panicked while inserting: the map is still
        // a valid map.
        let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = table.get(template) {
            return info;
        }
        let info: &'static RouteInfo = Box::leak(Box::new(RouteInfo {
            template: template.into(),
            names: param_names(template).map(Into::into).collect(),
        }));
        table.insert(template.into(), info);
        info
    }
}

/// The names of `{name}` and `{*name}` segments of a valid template, in order (`{{` is a
/// literal brace and never starts a segment of its own).
fn param_names(template: &str) -> impl Iterator<Item = &str> {
    template.split('/').filter_map(|segment| {
        let inner = segment.strip_prefix('{')?.strip_suffix('}')?;
        if inner.starts_with('{') {
            return None;
        }
        Some(inner.strip_prefix('*').unwrap_or(inner))
    })
}

/// A parameter value: start and end in the request path.
type Span = (u16, u16);

/// The parameters stored in a [`Request`]: empty until a router matched it.
#[derive(Clone, Debug, Default)]
pub(crate) struct RouteParams {
    route: Option<&'static RouteInfo>,
    inline: [Span; INLINE_PARAMS],
    /// Every span when the route has more than [`INLINE_PARAMS`] (then this allocates).
    spill: Box<[Span]>,
}

impl RouteParams {
    /// Records the parameters of a match over `path`.
    pub(crate) fn new(route: &'static RouteInfo, path: &str, params: &Params<'_, '_>) -> Self {
        let base = path.as_ptr() as usize;
        // Values are subslices of `path`, which is at most u16::MAX bytes long (the head is).
        let span = |v: &str| {
            let start = (v.as_ptr() as usize).wrapping_sub(base);
            (start as u16, (start + v.len()) as u16)
        };
        let mut out = RouteParams { route: Some(route), ..RouteParams::default() };
        if params.len() <= INLINE_PARAMS {
            for (slot, (_, v)) in out.inline.iter_mut().zip(params.iter()) {
                *slot = span(v);
            }
        } else {
            out.spill = params.iter().map(|(_, v)| span(v)).collect();
        }
        out
    }

    fn spans(&self) -> &[Span] {
        let n = self.route.map_or(0, |r| r.names.len());
        if n <= INLINE_PARAMS { &self.inline[..n] } else { &self.spill }
    }
}

/// Route parameters, read by handlers.
impl Request {
    /// The raw (still percent-encoded) value of the route parameter `name`, when a
    /// [`Router`](crate::Router) matched this request to a route with that parameter.
    ///
    /// # Examples
    /// ```
    /// use peregrine::routing::get;
    /// use peregrine::{Handler, Request, Router};
    ///
    /// async fn show(req: Request) -> String {
    ///     format!("user {}", req.param("id").unwrap_or("?"))
    /// }
    /// let router = Router::new().route("/users/{id}", get(show));
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let req = http::Request::get("/users/42").body(()).unwrap().into();
    /// let (_status, _headers, body) = rt.block_on(router.call(req)).into_parts();
    /// assert_eq!(rt.block_on(body.to_bytes(1024)).unwrap(), "user 42");
    /// ```
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The value of the route parameter `name`, percent-decoded and checked to be UTF-8
    /// (RFC 3986 §2.1). Borrows from the request when the value holds no `%`.
    ///
    /// # Errors
    /// [`DecodeError::Missing`] when the matched route has no such parameter (or no route
    /// matched); otherwise as for [`percent_decode`].
    pub fn param_decoded(&self, name: &str) -> Result<Cow<'_, str>, DecodeError> {
        percent_decode(self.param(name).ok_or(DecodeError::Missing)?)
    }

    /// The route parameters as `(name, raw value)` pairs in template order; empty when no
    /// router matched this request.
    pub fn params(&self) -> RequestParams<'_> {
        let stored = &self.route_params;
        let names: &[Box<str>] = stored.route.map_or(&[], |r| &r.names);
        RequestParams { path: self.path(), pairs: names.iter().zip(stored.spans()) }
    }

    /// The template of the route that matched, e.g. `"/users/{id}"` (with any
    /// [`nest`](crate::Router::nest) prefix); `None` when no router matched, or a fallback
    /// answered.
    pub fn matched_route(&self) -> Option<&'static str> {
        self.route_params.route.map(|r| &*r.template)
    }
}

/// Iterator over a request's route parameters, yielding `(name, raw value)`.
#[derive(Clone, Debug)]
pub struct RequestParams<'r> {
    path: &'r str,
    pairs: std::iter::Zip<std::slice::Iter<'r, Box<str>>, std::slice::Iter<'r, Span>>,
}

impl<'r> Iterator for RequestParams<'r> {
    type Item = (&'r str, &'r str);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, &(start, end)) = self.pairs.next()?;
        Some((name, self.path.get(usize::from(start)..usize::from(end)).unwrap_or("")))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.pairs.size_hint()
    }
}

impl ExactSizeIterator for RequestParams<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        template: &'static str,
        expect: &'static [&'static str],
    }

    /// The template grammar of `router` (module docs): `{name}`, `{*name}`, `{{`/`}}` escapes.
    #[test]
    fn names_in_template_order() {
        let cases = [
            Case { template: "/", expect: &[] },
            Case { template: "/users/{id}", expect: &["id"] },
            Case { template: "/r/{owner}/{repo}/{*path}", expect: &["owner", "repo", "path"] },
            Case { template: "/{{x}}/{y}", expect: &["y"] },
            Case { template: "/{{/{y}", expect: &["y"] },
            Case { template: "/a/{*rest}", expect: &["rest"] },
        ];
        for case in cases {
            let names: Vec<&str> = param_names(case.template).collect();
            assert_eq!(names, case.expect, "{}", case.template);
        }
    }

    #[test]
    fn interning_returns_the_same_info() {
        let a = RouteInfo::intern("/intern/{a}/{b}");
        let b = RouteInfo::intern("/intern/{a}/{b}");
        assert!(std::ptr::eq(a, b));
        assert_eq!(&*a.template, "/intern/{a}/{b}");
        assert_eq!(a.names.len(), 2);
    }
}
