//! The application router: URI templates and methods to handlers, served by [`Server`].
//!
//! [`Router`] maps `(method, path)` to handlers of any type with the rules of the sans-I/O
//! [`router`](crate::router) module (templates, priority, conflicts), and implements
//! [`Handler`], so it is what the server runs:
//!
//! - the matched handler gets the [`Request`] with its route parameters
//!   ([`Request::param`], [`Request::params`], [`Request::param_decoded`]);
//! - `404 Not Found` when no route matches (or the [fallback](Router::fallback) answers);
//! - `405 Method Not Allowed` with `Allow` when the path has routes for other methods
//!   (RFC 9110 §15.5.6);
//! - `OPTIONS` on a route without its own `OPTIONS` handler: `204 No Content` with `Allow`
//!   (RFC 9110 §9.3.7); `OPTIONS *`: `204`;
//! - `HEAD` by the `GET` handler (RFC 9110 §9.3.2; the server sends no content for `HEAD`);
//! - optionally `308 Permanent Redirect` to the path with its trailing slash toggled, query
//!   kept (RFC 9110 §15.4.9: the method and content are kept, unlike 301).
//!
//! # Cost
//!
//! Routing a request allocates nothing once a worker has warmed up: the handlers are
//! type-erased, and the future of the matched handler is stored in a buffer of
//! 1 KiB taken from the worker thread's free list and given back when the
//! request is done (a handler with a larger future is boxed per request, decided by its type
//! when the route is added and logged then). The request keeps one `&'static` to the matched
//! route's template (interned once per template for the life of the process) and finds
//! parameter values in its path on demand. The `Allow` values of 405 and `OPTIONS` responses
//! are built once per worker and reused; a 308 redirect's `Location` is built per response.
//!
//! Measured with `examples/routing_cost.rs` (callgrind): about 1,400 instructions per request
//! over a plain handler, 380 of them the route lookup.
//!
//! [`Server`]: crate::Server
//!
//! # Examples
//! ```
//! use peregrine::routing::get;
//! use peregrine::{Handler, Request, Router};
//!
//! async fn show(req: Request) -> String {
//!     format!("user {}", req.param("id").unwrap_or_default())
//! }
//! async fn update(_req: Request) -> &'static str { "updated" }
//!
//! let router = Router::new()
//!     .route("/", get(|_req: Request| async { "index" }))
//!     .route("/users/{id}", get(show).put(update));
//!
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let req = http::Request::post("/users/7").body(()).unwrap().into();
//! let res = rt.block_on(router.call(req));
//! assert_eq!(res.status(), 405);
//! assert_eq!(res.headers().get(&http::header::ALLOW).unwrap(), "GET, HEAD, PUT, OPTIONS");
//! ```

mod answer;
mod erased;
mod method_routes;
mod route_future;

use std::fmt;

pub use crate::request::params::RequestParams;
pub use method_routes::{
    MethodRoutes, any, delete, get, head, on, options, patch, post, put, trace,
};
#[cfg(any(fuzzing, feature = "unstable"))]
pub use route_future::POOLED_FUTURE_BYTES;
pub use route_future::RouteFuture;

use crate::handler::Handler;
use crate::method::Method;
use crate::request::Request;
use crate::request::params::{RouteInfo, RouteParams};
use crate::response::Response;
use crate::router::{InsertError, MethodRouter, Resolution, Tree};
use answer::{AllowCache, Answer};
use erased::ErasedHandler;
use method_routes::MethodKey;

/// A handler stored in the route tree, with its route's interned template and names.
#[derive(Clone)]
struct Entry {
    handler: ErasedHandler,
    route: &'static RouteInfo,
}

/// Routes requests to handlers by method and path; a [`Handler`] itself.
///
/// Build it once with [`Router::route`] (templates as in [`router`](crate::router)),
/// [`Router::nest`] and [`Router::fallback`], then give it to
/// [`Server::run`](crate::Server::run) or [`Server::spawn`](crate::Server::spawn). Each worker
/// thread gets its own clone.
///
/// # Examples
/// ```no_run
/// use peregrine::routing::get;
/// use peregrine::{Request, Router, Server};
///
/// async fn index(_req: Request) -> &'static str { "Hello, World!" }
/// async fn show(req: Request) -> String {
///     format!("user {}", req.param("id").unwrap_or_default())
/// }
///
/// fn main() -> std::io::Result<()> {
///     let app = Router::new().route("/", get(index)).route("/users/{id}", get(show));
///     Server::bind("127.0.0.1:8080").run(app)
/// }
/// ```
pub struct Router {
    tree: MethodRouter<Entry>,
    /// The routes as given, to re-insert them under a prefix when this router is nested.
    routes: Vec<(Box<str>, MethodRoutes)>,
    fallback: Option<ErasedHandler>,
    /// Fallbacks of nested routers, under `prefix`, `prefix/` and `prefix/{*rest}`.
    nested_fallbacks: Tree<ErasedHandler>,
    redirect_trailing_slash: bool,
    allow: AllowCache,
}

/// The name of the catch-all of a nested fallback's template.
const FALLBACK_REST: &str = "{*__fallback_rest}";

impl Default for Router {
    fn default() -> Self {
        Router::new()
    }
}

impl Router {
    /// A router without routes: every request is answered `404`.
    pub fn new() -> Router {
        Router {
            tree: MethodRouter::new(),
            routes: Vec::new(),
            fallback: None,
            nested_fallbacks: Tree::new(),
            redirect_trailing_slash: false,
            allow: AllowCache::default(),
        }
    }

    /// Routes `template` to `methods`: the handlers built by [`get`], [`post`], ... Routing
    /// the same template again adds methods to it.
    ///
    /// # Examples
    /// ```
    /// use peregrine::routing::{get, post};
    /// use peregrine::{Request, Router};
    ///
    /// async fn list(_req: Request) -> &'static str { "[]" }
    /// async fn create(_req: Request) -> (http::StatusCode, &'static str) {
    ///     (http::StatusCode::CREATED, "created")
    /// }
    /// let router = Router::new()
    ///     .route("/items", get(list).post(create))
    ///     .route("/items/{id}", get(|req: Request| async move {
    ///         format!("item {}", req.param("id").unwrap_or_default())
    ///     }));
    /// # let _ = router;
    /// ```
    ///
    /// # Panics
    /// When the template is malformed or conflicts with a route already present (the message
    /// is the [`InsertError`]'s; see [`router`](crate::router) for the rules), or when a method
    /// is routed twice. Use [`Router::try_route`] to get the error instead.
    #[track_caller]
    pub fn route(self, template: &str, methods: MethodRoutes) -> Router {
        match self.try_route(template, methods) {
            Ok(router) => router,
            Err(e) => panic!("{e}"),
        }
    }

    /// Routes `template` to `methods`, like [`Router::route`], returning the error instead of
    /// panicking.
    ///
    /// # Errors
    /// The [`InsertError`] of the first method that cannot be added: a malformed template, a
    /// conflict with a route already present, a method routed twice
    /// ([`Conflict::Method`](crate::router::Conflict::Method)), an invalid extension method.
    ///
    /// # Examples
    /// ```
    /// use peregrine::routing::get;
    /// use peregrine::router::Conflict;
    /// use peregrine::{Request, Router};
    ///
    /// async fn h(_req: Request) -> &'static str { "" }
    /// let router = Router::new().route("/users/{id}", get(h));
    /// let err = router.try_route("/users/{name}/posts", get(h)).unwrap_err();
    /// assert_eq!(err.conflict(), Some(Conflict::ParamName));
    /// ```
    pub fn try_route(
        mut self,
        template: &str,
        methods: MethodRoutes,
    ) -> Result<Router, InsertError> {
        let route = RouteInfo::intern(template);
        for (method, handler) in &methods.entries {
            let entry = Entry { handler: handler.clone(), route };
            match method {
                MethodKey::Standard(m) => self.tree.insert(template, *m, entry)?,
                MethodKey::Extension(token) => {
                    self.tree.insert_extension(template, token, entry)?;
                }
            }
        }
        self.routes.push((template.into(), methods));
        Ok(self)
    }

    /// Mounts every route of `other` under `prefix` (a template without a catch-all or a
    /// trailing `/`): its `/r` becomes `prefix/r` and its `/` becomes `prefix`. Handlers see
    /// the whole path, prefix included, and the parameters of both templates.
    ///
    /// A fallback of `other` answers the requests under the prefix that match none of its
    /// routes (`prefix`, `prefix/` and everything below), before this router's fallback.
    /// The trailing-slash setting of `other` is not kept: this router's applies.
    ///
    /// # Examples
    /// ```
    /// use peregrine::routing::get;
    /// use peregrine::{Request, Router};
    ///
    /// let users = Router::new()
    ///     .route("/", get(|_req: Request| async { "all users" }))
    ///     .route("/{id}", get(|req: Request| async move {
    ///         format!("user {}", req.param("id").unwrap_or_default())
    ///     }));
    /// let app = Router::new().nest("/api/users", users); // /api/users, /api/users/{id}
    /// # let _ = app;
    /// ```
    ///
    /// # Panics
    /// As for [`Router::try_nest`]'s errors.
    #[track_caller]
    pub fn nest(self, prefix: &str, other: Router) -> Router {
        match self.try_nest(prefix, other) {
            Ok(router) => router,
            Err(e) => panic!("{e}"),
        }
    }

    /// Mounts `other` under `prefix`, like [`Router::nest`], returning the error instead of
    /// panicking.
    ///
    /// # Errors
    /// A malformed prefix ([`Malformed::InvalidPrefix`](crate::router::Malformed) for a
    /// catch-all or trailing `/`), or any conflict between the prefixed routes (or nested
    /// fallbacks) and this router's.
    pub fn try_nest(mut self, prefix: &str, other: Router) -> Result<Router, InsertError> {
        // Checks the prefix by the router's own rules, on an empty router.
        MethodRouter::<()>::new().nest(prefix, MethodRouter::new())?;
        for (template, methods) in other.routes {
            self = self.try_route(&nested(prefix, &template), methods)?;
        }
        self.nested_fallbacks.nest(prefix, other.nested_fallbacks)?;
        if let Some(fallback) = other.fallback {
            let mut forms = vec![nested(prefix, "/"), nested(prefix, &format!("/{FALLBACK_REST}"))];
            if prefix != "/" {
                forms.push(format!("{prefix}/"));
            }
            for template in forms {
                self.nested_fallbacks.insert(&template, fallback.clone())?;
            }
        }
        Ok(self)
    }

    /// Answers the requests that match no route (instead of `404 Not Found`) with `handler`,
    /// whatever their method: this is how a directory of static files is mounted.
    ///
    /// The fallback sees no route parameters. `405` and `OPTIONS` answers for paths that do
    /// match a route are not affected.
    ///
    /// # Examples
    /// ```
    /// use peregrine::routing::get;
    /// use peregrine::{Request, Router};
    ///
    /// let app = Router::new()
    ///     .route("/", get(|_req: Request| async { "home" }))
    ///     .fallback(|req: Request| async move {
    ///         (http::StatusCode::NOT_FOUND, format!("nothing at {}", req.path()))
    ///     });
    /// # let _ = app;
    /// ```
    pub fn fallback<H>(mut self, handler: H) -> Router
    where
        H: Handler,
        H::Future: 'static,
    {
        self.fallback = Some(ErasedHandler::new(handler));
        self
    }

    /// Turns on (or off) the `308` redirect of a path that matches no route to the same path
    /// with its trailing slash added or removed, when that form matches one; the query is
    /// kept. Off by default.
    pub fn redirect_trailing_slash(mut self, on: bool) -> Router {
        self.redirect_trailing_slash = on;
        self.tree.set_redirect_trailing_slash(on);
        self
    }

    /// Number of routes (templates), whatever their methods.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// `true` when no route was added.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Answers a request that matched no route: a nested fallback, the fallback, or 404.
    fn not_found(&self, req: Request) -> RouteFuture {
        if let Ok(m) = self.nested_fallbacks.at(req.path()) {
            return m.value.call(req);
        }
        match &self.fallback {
            Some(fallback) => fallback.call(req),
            // RFC 9110 §9.3.7: `OPTIONS *` asks about the server itself, not a resource.
            None if req.method() == Method::Options && req.path() == "*" => {
                RouteFuture::ready(Answer::NoContent)
            }
            None => RouteFuture::ready(Answer::NotFound),
        }
    }
}

impl Handler for Router {
    type Output = Response;
    type Future = RouteFuture;

    fn call(&self, mut req: Request) -> RouteFuture {
        let path = req.path();
        let resolution = match req.method() {
            Method::Extension => self.tree.resolve_extension(req.method_str(), path),
            m => self.tree.resolve(m, path),
        };
        match resolution {
            Resolution::Found { value, .. } => {
                req.route_params = RouteParams::new(value.route);
                value.handler.call(req)
            }
            Resolution::MethodNotAllowed { allow } => {
                RouteFuture::ready(Answer::MethodNotAllowed(self.allow.value(allow)))
            }
            Resolution::Options { allow } => {
                RouteFuture::ready(Answer::Options(self.allow.value(allow)))
            }
            Resolution::RedirectTrailingSlash { location } => {
                RouteFuture::ready(Answer::redirect(location, req.query()))
            }
            Resolution::NotFound => self.not_found(req),
        }
    }
}

impl Clone for Router {
    fn clone(&self) -> Self {
        Router {
            tree: self.tree.clone(),
            routes: self.routes.clone(),
            fallback: self.fallback.clone(),
            nested_fallbacks: self.nested_fallbacks.clone(),
            redirect_trailing_slash: self.redirect_trailing_slash,
            // Each clone (each worker) fills its own.
            allow: AllowCache::default(),
        }
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("routes", &self.tree)
            .field("fallback", &self.fallback.is_some())
            .field("nested_fallbacks", &self.nested_fallbacks)
            .field("redirect_trailing_slash", &self.redirect_trailing_slash)
            .finish()
    }
}

/// The template `template` gets under a nesting `prefix` (the router's rule: `/` becomes the
/// prefix itself).
fn nested(prefix: &str, template: &str) -> String {
    match (prefix, template) {
        ("/", t) => t.to_owned(),
        (p, "/") => p.to_owned(),
        (p, t) => format!("{p}{t}"),
    }
}
