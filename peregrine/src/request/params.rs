//! The route parameters a [`Request`] carries: one pointer to the matched route, from which a
//! handler reads them without the router and without an allocation.
//!
//! A request stores only an `&'static` [`RouteInfo`]: the route's template as segments. The
//! values are found again on demand by walking the template and the request path side by side,
//! which is exact because the router matched this path to this template segment by segment (a
//! static or parameter segment is one path segment, a catch-all is the rest). That keeps the
//! request 8 bytes larger rather than a span array larger (the request lives inside every
//! connection's future), and setting the parameters copies one pointer.
//!
//! A [`RouteInfo`] is interned once per distinct template for the life of the process, so no
//! reference count is touched by several worker threads per request; the cost is that a
//! template's text stays allocated after its router is dropped, bounded by the number of
//! distinct templates the program ever routes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::Request;
use crate::router::template::{self, Segment};
use crate::router::{DecodeError, percent_decode};

/// One segment of a route template, as the request side needs it.
#[derive(Debug)]
enum Seg {
    Static,
    Param(Box<str>),
    CatchAll(Box<str>),
}

/// What the request side knows of a route: its template, segment by segment.
#[derive(Debug)]
pub(crate) struct RouteInfo {
    template: Box<str>,
    /// The segments after the leading `/`.
    segments: Box<[Seg]>,
    params: usize,
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
        let segments = segments(template);
        let params = segments.iter().filter(|s| !matches!(s, Seg::Static)).count();
        let info: &'static RouteInfo =
            Box::leak(Box::new(RouteInfo { template: template.into(), segments, params }));
        table.insert(template.into(), info);
        info
    }
}

/// The segments of a template the router accepted, after its leading `/`, as the router's
/// grammar reads them.
fn segments(template: &str) -> Box<[Seg]> {
    // Interned before the router checks it: a template that does not parse never routes a
    // request, so it needs no segments.
    let Ok(parsed) = template::parse(template) else {
        return Box::default();
    };
    parsed
        .into_iter()
        .map(|segment| match segment {
            Segment::Static(_) => Seg::Static,
            Segment::Param(name) => Seg::Param(name.into()),
            Segment::CatchAll(name) => Seg::CatchAll(name.into()),
        })
        .collect()
}

/// The route stored in a [`Request`]: none until a router matched it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RouteParams(Option<&'static RouteInfo>);

impl RouteParams {
    /// The parameters of a request matched to `route`.
    pub(crate) fn new(route: &'static RouteInfo) -> RouteParams {
        RouteParams(Some(route))
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
        let (segments, left): (&[Seg], usize) = match self.route_params.0 {
            Some(route) => (&route.segments, route.params),
            None => (&[], 0),
        };
        let path = self.path();
        RequestParams {
            rest: path.strip_prefix('/').unwrap_or(path),
            segments: segments.iter(),
            left,
        }
    }

    /// The template of the route that matched, e.g. `"/users/{id}"` (with any
    /// [`nest`](crate::Router::nest) prefix); `None` when no router matched, or a fallback
    /// answered.
    pub fn matched_route(&self) -> Option<&'static str> {
        self.route_params.0.map(|r| &*r.template)
    }
}

/// Iterator over a request's route parameters, yielding `(name, raw value)`.
#[derive(Clone, Debug)]
pub struct RequestParams<'r> {
    /// The path not walked yet, after the `/` that ended the previous segment.
    rest: &'r str,
    segments: std::slice::Iter<'r, Seg>,
    /// Parameters not yielded yet.
    left: usize,
}

impl<'r> Iterator for RequestParams<'r> {
    type Item = (&'r str, &'r str);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let segment = self.segments.next()?;
            let (here, after) = match self.rest.split_once('/') {
                Some((here, after)) => (here, after),
                None => (self.rest, ""),
            };
            match segment {
                Seg::Static => self.rest = after,
                Seg::Param(name) => {
                    self.rest = after;
                    self.left = self.left.saturating_sub(1);
                    return Some((name, here));
                }
                Seg::CatchAll(name) => {
                    let value = std::mem::take(&mut self.rest);
                    self.left = 0;
                    return Some((name, value));
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for RequestParams<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Case {
        template: &'static str,
        path: &'static str,
        expect: &'static [(&'static str, &'static str)],
    }

    /// The template grammar of `router` (module docs): `{name}` is one non-empty segment,
    /// `{*name}` the rest with its slashes, `{{`/`}}` escape braces in a static segment.
    #[test]
    fn values_found_by_walking_template_and_path() {
        let cases = [
            Case { template: "/", path: "/", expect: &[] },
            Case { template: "/users/{id}", path: "/users/42", expect: &[("id", "42")] },
            Case {
                template: "/r/{owner}/{repo}/{*path}",
                path: "/r/me/x/a/b/",
                expect: &[("owner", "me"), ("repo", "x"), ("path", "a/b/")],
            },
            Case { template: "/{{x}}/{y}", path: "/{x}/7", expect: &[("y", "7")] },
            Case { template: "/a//{y}/", path: "/a//%20/", expect: &[("y", "%20")] },
            Case { template: "/{a}/{b}", path: "/1/2", expect: &[("a", "1"), ("b", "2")] },
        ];
        for case in cases {
            let mut req: Request = http::Request::get(case.path).body(()).unwrap().into();
            req.route_params = RouteParams::new(RouteInfo::intern(case.template));
            let got: Vec<(&str, &str)> = req.params().collect();
            assert_eq!(got, case.expect, "{}", case.template);
            assert_eq!(req.params().len(), case.expect.len(), "{}", case.template);
            assert_eq!(req.matched_route(), Some(case.template));
        }
    }

    #[test]
    fn unrouted_request_has_no_params() {
        let req: Request = http::Request::get("/a/b").body(()).unwrap().into();
        assert_eq!(req.params().next(), None);
        assert_eq!(req.param("a"), None);
        assert_eq!(req.param_decoded("a"), Err(DecodeError::Missing));
        assert_eq!(req.matched_route(), None);
    }

    #[test]
    fn interning_returns_the_same_info() {
        let a = RouteInfo::intern("/intern/{a}/{b}");
        let b = RouteInfo::intern("/intern/{a}/{b}");
        assert!(std::ptr::eq(a, b));
        assert_eq!(&*a.template, "/intern/{a}/{b}");
        assert_eq!(a.params, 2);
    }
}
