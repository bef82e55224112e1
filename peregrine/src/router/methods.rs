//! Per-method values on top of the path tree: 404, 405 with `Allow`, OPTIONS, HEAD via GET,
//! and the optional trailing-slash redirect.

use std::borrow::Cow;
use std::fmt;

use super::error::{Conflict, InsertError, Malformed};
use super::params::Params;
use super::tree::{Tree, check_prefix, nested_template};
use crate::http1::field_syntax::is_token;
use crate::method::{Method, STANDARD_METHODS};

/// The values one route holds, per method.
#[derive(Clone, Debug)]
struct Endpoint<T> {
    /// Bit `m as u8` set when standard method `m` has a value.
    mask: u16,
    /// Values of the standard methods in tag order (index: set bits below the method's bit).
    values: Vec<T>,
    ext_names: Vec<Box<str>>,
    ext_values: Vec<T>,
}

const fn bit(m: Method) -> u16 {
    1 << (m as u8)
}

impl<T> Endpoint<T> {
    fn new() -> Self {
        Endpoint { mask: 0, values: Vec::new(), ext_names: Vec::new(), ext_values: Vec::new() }
    }

    fn get(&self, m: Method) -> Option<&T> {
        if m == Method::Extension || self.mask & bit(m) == 0 {
            return None;
        }
        self.values.get((self.mask & (bit(m) - 1)).count_ones() as usize)
    }

    fn get_ext(&self, token: &str) -> Option<&T> {
        let i = self.ext_names.iter().position(|n| &**n == token)?;
        self.ext_values.get(i)
    }

    fn has(&self, m: &MethodKey<'_>) -> bool {
        match m {
            MethodKey::Standard(m) => self.mask & bit(*m) != 0,
            MethodKey::Extension(t) => self.ext_names.iter().any(|n| **n == **t),
        }
    }

    /// Adds a value; the caller checked the method is free.
    fn add(&mut self, m: MethodKey<'_>, value: T) {
        match m {
            MethodKey::Standard(m) => {
                let at = (self.mask & (bit(m) - 1)).count_ones() as usize;
                self.values.insert(at, value);
                self.mask |= bit(m);
            }
            MethodKey::Extension(t) => {
                self.ext_names.push(t.into_owned().into_boxed_str());
                self.ext_values.push(value);
            }
        }
    }

    fn into_pairs(self) -> impl Iterator<Item = (MethodKey<'static>, T)> {
        let mask = self.mask;
        let standard = STANDARD_METHODS.into_iter().filter(move |m| mask & bit(*m) != 0);
        let standard = standard.map(MethodKey::Standard).zip(self.values);
        let ext = self.ext_names.into_iter().map(|n| MethodKey::Extension(Cow::Owned(n.into())));
        let ext = ext.zip(self.ext_values);
        standard.chain(ext)
    }

    fn keys(&self) -> impl Iterator<Item = MethodKey<'_>> {
        let mask = self.mask;
        let standard = STANDARD_METHODS.into_iter().filter(move |m| mask & bit(*m) != 0);
        let ext = self.ext_names.iter().map(|n| MethodKey::Extension(Cow::Borrowed(&**n)));
        standard.map(MethodKey::Standard).chain(ext)
    }

    fn allow(&self) -> AllowSet<'_> {
        let mut mask = self.mask | bit(Method::Options);
        if mask & bit(Method::Get) != 0 {
            mask |= bit(Method::Head);
        }
        AllowSet { mask, ext: &self.ext_names }
    }
}

/// A method as stored: a standard tag or an extension token.
enum MethodKey<'a> {
    Standard(Method),
    Extension(Cow<'a, str>),
}

/// A router from (method, path) to values of type `T`: a [`Tree`] whose routes hold one value
/// per method.
///
/// # Examples
/// ```
/// use peregrine::Method;
/// use peregrine::router::{MethodRouter, Resolution};
/// let mut r = MethodRouter::new();
/// r.insert("/users/{id}", Method::Get, "show").unwrap();
/// r.insert("/users/{id}", Method::Put, "update").unwrap();
///
/// let Resolution::Found { value, params, .. } = r.resolve(Method::Head, "/users/7") else {
///     panic!("HEAD is answered by GET");
/// };
/// assert_eq!((*value, params.get("id")), ("show", Some("7")));
///
/// let Resolution::MethodNotAllowed { allow } = r.resolve(Method::Post, "/users/7") else {
///     panic!("405");
/// };
/// assert_eq!(allow.to_string(), "GET, HEAD, PUT, OPTIONS");
/// assert!(matches!(r.resolve(Method::Options, "/users/7"), Resolution::Options { .. }));
/// assert!(matches!(r.resolve(Method::Get, "/nope"), Resolution::NotFound));
/// ```
#[derive(Clone)]
pub struct MethodRouter<T> {
    tree: Tree<Endpoint<T>>,
    redirect_trailing_slash: bool,
}

/// What a request resolves to; the caller turns it into a response.
#[derive(Debug)]
pub enum Resolution<'r, 'p, T> {
    /// The route and method have a value.
    Found {
        /// The value stored for the method (for `HEAD` without its own value: `GET`'s).
        value: &'r T,
        /// The route's parameters.
        params: Params<'r, 'p>,
        /// The matched template.
        template: &'r str,
    },
    /// 405: the path exists, the method does not (RFC 9110 §15.5.6); send `Allow`.
    MethodNotAllowed {
        /// The `Allow` header value (RFC 9110 §10.2.1).
        allow: AllowSet<'r>,
    },
    /// `OPTIONS` on a path without its own `OPTIONS` value (RFC 9110 §9.3.7): answer with
    /// `Allow`.
    Options {
        /// The `Allow` header value.
        allow: AllowSet<'r>,
    },
    /// 308: the path does not exist but its form with the trailing slash added or removed does
    /// (only when enabled by [`MethodRouter::set_redirect_trailing_slash`]).
    RedirectTrailingSlash {
        /// The `Location` path; the caller appends the request's `?query`, if any.
        location: Location<'p>,
    },
    /// 404: no route matches the path.
    NotFound,
}

impl<T> Default for MethodRouter<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> MethodRouter<T> {
    /// An empty router, trailing-slash redirect off.
    pub fn new() -> Self {
        MethodRouter { tree: Tree::new(), redirect_trailing_slash: false }
    }

    /// Number of routes (templates), whatever their methods.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// `true` when no route has been inserted.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Turns the 308 trailing-slash redirect on or off (off by default).
    pub fn set_redirect_trailing_slash(&mut self, on: bool) {
        self.redirect_trailing_slash = on;
    }

    /// Routes `method` on `template` to `value`. Inserting the same template again with
    /// another method adds to the route.
    ///
    /// # Errors
    /// As for [`Tree::insert`]; [`Conflict::Method`] when the route already has `method`;
    /// [`Malformed::InvalidMethod`] for [`Method::Extension`] (use
    /// [`MethodRouter::insert_extension`]). A failed insert changes nothing.
    pub fn insert(&mut self, template: &str, method: Method, value: T) -> Result<(), InsertError> {
        if method == Method::Extension {
            return Err(InsertError::malformed_at(template, 0, Malformed::InvalidMethod));
        }
        self.add(template, MethodKey::Standard(method), value)
    }

    /// Routes the extension method `token` (RFC 9110 §9.1: case-sensitive) on `template`. A
    /// standard method's name is routed as that method.
    ///
    /// # Errors
    /// As for [`MethodRouter::insert`]; [`Malformed::InvalidMethod`] when `token` is not an
    /// RFC 9110 §5.6.2 token.
    pub fn insert_extension(
        &mut self,
        template: &str,
        token: &str,
        value: T,
    ) -> Result<(), InsertError> {
        // RFC 9110 §5.6.2: a method is a token; one owner for the token grammar.
        if !is_token(token.as_bytes()) {
            return Err(InsertError::malformed_at(template, 0, Malformed::InvalidMethod));
        }
        match Method::from_token(token.as_bytes()) {
            Method::Extension => {
                self.add(template, MethodKey::Extension(Cow::Borrowed(token)), value)
            }
            m => self.add(template, MethodKey::Standard(m), value),
        }
    }

    fn add(&mut self, template: &str, method: MethodKey<'_>, value: T) -> Result<(), InsertError> {
        match self.tree.route_mut(template)? {
            Some(endpoint) if endpoint.has(&method) => Err(InsertError::Conflict {
                template: template.into(),
                with: template.into(),
                kind: Conflict::Method,
            }),
            Some(endpoint) => {
                endpoint.add(method, value);
                Ok(())
            }
            None => {
                let mut endpoint = Endpoint::new();
                endpoint.add(method, value);
                self.tree.insert(template, endpoint)
            }
        }
    }

    /// Mounts every route of `other` under `prefix` (rules as for [`Tree::nest`]); a route
    /// present in both keeps the methods of both.
    ///
    /// # Errors
    /// As for [`Tree::nest`], and [`Conflict::Method`] when a route of both has the same
    /// method; the router is then unchanged.
    pub fn nest(&mut self, prefix: &str, other: MethodRouter<T>) -> Result<(), InsertError> {
        check_prefix(prefix)?;
        let mut entries = Vec::with_capacity(other.len());
        for (template, endpoint) in other.tree.into_entries() {
            let template = nested_template(prefix, &template);
            match self.tree.route(&template)? {
                Some(mine) => {
                    if endpoint.keys().any(|k| mine.has(&k)) {
                        let (template, with) = (template.clone().into(), template.into());
                        return Err(InsertError::Conflict {
                            template,
                            with,
                            kind: Conflict::Method,
                        });
                    }
                }
                None => self.tree.check(&template)?,
            }
            entries.push((template, endpoint));
        }
        for (template, endpoint) in entries {
            for (method, value) in endpoint.into_pairs() {
                self.add(&template, method, value)?;
            }
        }
        Ok(())
    }

    /// Resolves a request with a standard method. For [`Method::Extension`] use
    /// [`MethodRouter::resolve_extension`]; passed here it matches no method's value.
    ///
    /// Never allocates (unless the route has more than
    /// [`INLINE_PARAMS`](super::INLINE_PARAMS) parameters) and never panics.
    pub fn resolve<'r, 'p>(&'r self, method: Method, path: &'p str) -> Resolution<'r, 'p, T> {
        let Ok(m) = self.tree.at(path) else {
            return self.not_found(path);
        };
        let endpoint = m.value;
        // RFC 9110 §9.3.2: HEAD is GET without the content.
        let value = match method {
            Method::Head => endpoint.get(Method::Head).or_else(|| endpoint.get(Method::Get)),
            m => endpoint.get(m),
        };
        match value {
            Some(value) => Resolution::Found { value, params: m.params, template: m.template },
            None if method == Method::Options => Resolution::Options { allow: endpoint.allow() },
            None => Resolution::MethodNotAllowed { allow: endpoint.allow() },
        }
    }

    /// Resolves a request with an extension method token (or a standard one, by name).
    pub fn resolve_extension<'r, 'p>(
        &'r self,
        token: &str,
        path: &'p str,
    ) -> Resolution<'r, 'p, T> {
        match Method::from_token(token.as_bytes()) {
            Method::Extension => {}
            m => return self.resolve(m, path),
        }
        let Ok(m) = self.tree.at(path) else {
            return self.not_found(path);
        };
        match m.value.get_ext(token) {
            Some(value) => Resolution::Found { value, params: m.params, template: m.template },
            None => Resolution::MethodNotAllowed { allow: m.value.allow() },
        }
    }

    fn not_found<'r, 'p>(&'r self, path: &'p str) -> Resolution<'r, 'p, T> {
        if self.redirect_trailing_slash && self.tree.matches_other_slash_form(path) {
            let location = match path.strip_suffix('/') {
                Some(shorter) => Location { path: shorter, add_slash: false },
                None => Location { path, add_slash: true },
            };
            return Resolution::RedirectTrailingSlash { location };
        }
        Resolution::NotFound
    }
}

impl<T> fmt::Debug for MethodRouter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.tree.iter().map(|(t, _)| t)).finish()
    }
}

/// The methods a route allows: the `Allow` header value (RFC 9110 §10.2.1), rendered by
/// [`Display`](fmt::Display) without allocating.
///
/// Always lists `OPTIONS` (answered by the router) and lists `HEAD` whenever `GET` is routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowSet<'r> {
    mask: u16,
    ext: &'r [Box<str>],
}

impl<'r> AllowSet<'r> {
    /// Whether the standard method is allowed.
    pub fn contains(&self, m: Method) -> bool {
        m != Method::Extension && self.mask & bit(m) != 0
    }

    /// The allowed method names: standard ones in tag order, then extensions in insertion
    /// order.
    pub fn iter(&self) -> impl Iterator<Item = &'r str> + use<'r> {
        let mask = self.mask;
        let standard = STANDARD_METHODS.into_iter().filter(move |m| mask & bit(*m) != 0);
        let ext: &'r [Box<str>] = self.ext;
        standard.filter_map(|m| -> Option<&'r str> { m.as_str() }).chain(ext.iter().map(|e| &**e))
    }
}

impl fmt::Display for AllowSet<'_> {
    /// RFC 9110 §10.2.1: `Allow = #method`, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(m)?;
        }
        Ok(())
    }
}

/// Target of a trailing-slash redirect: the request path with its final `/` added or removed,
/// rendered by [`Display`](fmt::Display) without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location<'p> {
    path: &'p str,
    add_slash: bool,
}

impl<'p> Location<'p> {
    /// The path without the slash to add (or with the slash already removed).
    pub fn base(&self) -> &'p str {
        self.path
    }

    /// Whether a `/` follows [`Location::base`].
    pub fn adds_slash(&self) -> bool {
        self.add_slash
    }
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path)?;
        if self.add_slash { f.write_str("/") } else { Ok(()) }
    }
}
