//! The handlers of one route, per method: what `get(show).post(update)` builds.

use super::erased::ErasedHandler;
use crate::handler::Handler;
use crate::method::{Method, STANDARD_METHODS};

/// Which method a handler answers.
#[derive(Clone, Debug)]
pub(crate) enum MethodKey {
    Standard(Method),
    Extension(Box<str>),
}

/// The handlers of one route, one per method, given to [`Router::route`](crate::Router::route).
///
/// Built with the functions of [`routing`](crate::routing) ([`get`], [`post`], ...) and
/// extended with the methods of the same names. A method without a handler is answered by the
/// router: `405 Method Not Allowed` with `Allow`, or `OPTIONS` with `Allow`; `HEAD` is
/// answered by the `GET` handler (RFC 9110 §9.3.2) unless the route has a `HEAD` handler.
///
/// # Examples
/// ```
/// use peregrine::Request;
/// use peregrine::routing::{MethodRoutes, get};
///
/// async fn show(_req: Request) -> &'static str { "show" }
/// async fn update(_req: Request) -> &'static str { "updated" }
/// let routes: MethodRoutes = get(show).put(update).delete(|_req: Request| async { "gone" });
/// # let _ = routes;
/// ```
#[derive(Clone, Debug, Default)]
pub struct MethodRoutes {
    pub(crate) entries: Vec<(MethodKey, ErasedHandler)>,
}

macro_rules! method_fns {
    ($($name:ident => $method:ident, $text:literal;)*) => {
        $(
            #[doc = concat!("A route answering `", $text, "` with `handler`.")]
            ///
            /// # Examples
            /// ```
            /// use peregrine::{Request, Router};
            #[doc = concat!("use peregrine::routing::", stringify!($name), ";")]
            #[doc = concat!(
                "let router = Router::new().route(\"/\", ",
                stringify!($name),
                "(|_req: Request| async { \"ok\" }));"
            )]
            /// # let _ = router;
            /// ```
            pub fn $name<H>(handler: H) -> MethodRoutes
            where
                H: Handler,
                H::Future: 'static,
            {
                MethodRoutes::new().$name(handler)
            }
        )*

        impl MethodRoutes {
            $(
                #[doc = concat!("Also answers `", $text, "` with `handler`.")]
                pub fn $name<H>(self, handler: H) -> MethodRoutes
                where
                    H: Handler,
                    H::Future: 'static,
                {
                    self.on(Method::$method, handler)
                }
            )*
        }
    };
}

method_fns! {
    get => Get, "GET";
    head => Head, "HEAD";
    post => Post, "POST";
    put => Put, "PUT";
    delete => Delete, "DELETE";
    options => Options, "OPTIONS";
    trace => Trace, "TRACE";
    patch => Patch, "PATCH";
}

/// A route answering every standard method (RFC 9110 §9) with `handler`; extension methods
/// are answered `405`.
///
/// # Examples
/// ```
/// use peregrine::{Request, Router};
/// use peregrine::routing::any;
/// let router = Router::new().route("/echo", any(|req: Request| async move {
///     req.method_str().to_owned()
/// }));
/// # let _ = router;
/// ```
pub fn any<H>(handler: H) -> MethodRoutes
where
    H: Handler,
    H::Future: 'static,
{
    MethodRoutes::new().any(handler)
}

/// A route answering `method` with `handler`.
pub fn on<H>(method: Method, handler: H) -> MethodRoutes
where
    H: Handler,
    H::Future: 'static,
{
    MethodRoutes::new().on(method, handler)
}

impl MethodRoutes {
    /// No handler yet.
    pub fn new() -> MethodRoutes {
        MethodRoutes::default()
    }

    /// Also answers `method` with `handler`. [`Method::Extension`] is refused when the route
    /// is added (use [`MethodRoutes::on_extension`]).
    pub fn on<H>(mut self, method: Method, handler: H) -> MethodRoutes
    where
        H: Handler,
        H::Future: 'static,
    {
        self.entries.push((MethodKey::Standard(method), ErasedHandler::new(handler)));
        self
    }

    /// Also answers the extension method `token` (case-sensitive, RFC 9110 §9.1), e.g.
    /// `"PROPFIND"`, with `handler`. A token that is not an RFC 9110 §5.6.2 `token` is refused
    /// when the route is added.
    pub fn on_extension<H>(mut self, token: &str, handler: H) -> MethodRoutes
    where
        H: Handler,
        H::Future: 'static,
    {
        self.entries.push((MethodKey::Extension(token.into()), ErasedHandler::new(handler)));
        self
    }

    /// Also answers every standard method with `handler` (the handler is cloned per method).
    pub fn any<H>(mut self, handler: H) -> MethodRoutes
    where
        H: Handler,
        H::Future: 'static,
    {
        let erased = ErasedHandler::new(handler);
        for m in STANDARD_METHODS {
            self.entries.push((MethodKey::Standard(m), erased.clone()));
        }
        self
    }
}
