//! The path tree: one arena of nodes, one hash table of static edges, one text arena.
//!
//! A node stands for a position after some segments of a template. It has up to three kinds of
//! children: static ones (in [`Edges`], keyed by the segment text), at most one parameter
//! child and at most one catch-all child (a parameter and a catch-all never share a node: the
//! conflict rules forbid it). A node at the end of a template holds that route's index.

use std::fmt;

use super::edges::Edges;
use super::error::{Conflict, InsertError, Malformed, NotFound};
use super::params::{Params, Raw};
use super::segment::{scan, segment_end};
use super::template::{Segment, parse};

/// "No such child / no route here".
const NONE: u32 = u32::MAX;
const ROOT: u32 = 0;

#[derive(Clone, Copy, Debug)]
struct Node {
    param: u32,
    catch: u32,
    route: u32,
    /// The parameter name of a parameter or catch-all node, in `Tree::text`.
    name_off: u32,
    name_len: u32,
    /// Whether any static edge leaves this node (skips a hash probe when none does).
    has_statics: bool,
}

const NODE: Node = Node {
    param: NONE,
    catch: NONE,
    route: NONE,
    name_off: 0,
    name_len: 0,
    has_statics: false,
};

#[derive(Clone, Debug)]
struct Route<T> {
    value: T,
    template_off: u32,
    template_len: u32,
}

/// A path router: templates to values of type `T`, matched by segments.
///
/// The matching and conflict rules are specified in the [module docs](super).
///
/// # Examples
/// ```
/// use peregrine::router::Tree;
/// let mut tree = Tree::new();
/// tree.insert("/users/new", "form").unwrap();
/// tree.insert("/users/{id}", "show").unwrap();
/// tree.insert("/static/{*file}", "files").unwrap();
///
/// assert_eq!(*tree.at("/users/new").unwrap().value, "form");
/// let m = tree.at("/users/42").unwrap();
/// assert_eq!((*m.value, m.params.get("id")), ("show", Some("42")));
/// assert_eq!(tree.at("/static/css/site.css").unwrap().params.get("file"), Some("css/site.css"));
/// assert!(tree.at("/users").is_err());
/// ```
#[derive(Clone)]
pub struct Tree<T> {
    nodes: Vec<Node>,
    edges: Edges,
    /// Parameter names and templates.
    text: String,
    routes: Vec<Route<T>>,
}

/// A successful lookup: the route's value, its parameters and its template.
#[derive(Clone, Debug)]
pub struct Match<'t, 'p, T> {
    /// The value stored with the route.
    pub value: &'t T,
    /// The parameters, borrowing the path.
    pub params: Params<'t, 'p>,
    /// The template the path matched, as inserted.
    pub template: &'t str,
}

enum Located {
    /// The exact route is in the table.
    Existing(u32),
    /// The walk left the tree after `depth` segments, at `node`.
    Vacant { node: u32, depth: usize },
}

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Tree<T> {
    /// An empty tree (allocates nothing until the first insert).
    pub fn new() -> Self {
        Tree {
            nodes: Vec::new(),
            edges: Edges::default(),
            text: String::new(),
            routes: Vec::new(),
        }
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// `true` when no route has been inserted.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// Adds a route.
    ///
    /// # Errors
    /// [`InsertError::Malformed`] when the template breaks the grammar, and
    /// [`InsertError::Conflict`] (naming the route already present) when it breaks a conflict
    /// rule. A failed insert leaves the tree unchanged.
    pub fn insert(&mut self, template: &str, value: T) -> Result<(), InsertError> {
        let segments = parse(template)?;
        match self.locate(template, &segments)? {
            Located::Existing(route) => {
                Err(self.conflict_route(template, route, Conflict::Duplicate))
            }
            Located::Vacant { node, depth } => self.build(template, &segments, node, depth, value),
        }
    }

    /// Finds the route matching `path`.
    ///
    /// `path` is the raw path of the request target (RFC 9112 §3.2: origin-form, without the
    /// `?query`); segments are compared byte for byte without decoding. Never allocates unless
    /// the route has more than [`INLINE_PARAMS`](super::INLINE_PARAMS) parameters; never
    /// panics.
    ///
    /// # Errors
    /// [`NotFound`] when no route matches (including any `path` not starting with `/`).
    #[inline]
    pub fn at<'t, 'p>(&'t self, path: &'p str) -> Result<Match<'t, 'p, T>, NotFound> {
        let bytes = path.as_bytes();
        // Parameter spans are u32 offsets.
        if bytes.first() != Some(&b'/') || bytes.len() >= NONE as usize {
            return Err(NotFound);
        }
        let mut params = Params::new(&self.text, path);
        let route = self
            .walk::<false>(bytes, ROOT, 1, &mut params)
            .ok_or(NotFound)?;
        let r = self.routes.get(route as usize).ok_or(NotFound)?;
        Ok(Match {
            value: &r.value,
            params,
            template: self.template_of(r),
        })
    }

    /// `(template, value)` for every route, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.routes.iter().map(|r| (self.template_of(r), &r.value))
    }

    /// Mounts every route of `other` under `prefix`.
    ///
    /// `prefix` is a template without a catch-all and without a trailing `/` (or `/` itself,
    /// which merges the trees). A nested route `/` becomes `prefix` itself; any other nested
    /// route `/r` becomes `prefix/r`.
    ///
    /// # Errors
    /// As for [`Tree::insert`], for the prefix or for the first nested route that does not fit;
    /// the tree is then unchanged.
    ///
    /// # Examples
    /// ```
    /// use peregrine::router::Tree;
    /// let mut api = Tree::new();
    /// api.insert("/", "index").unwrap();
    /// api.insert("/users/{id}", "user").unwrap();
    /// let mut app = Tree::new();
    /// app.insert("/", "home").unwrap();
    /// app.nest("/api/{version}", api).unwrap();
    /// assert_eq!(*app.at("/api/v2").unwrap().value, "index");
    /// let m = app.at("/api/v2/users/7").unwrap();
    /// assert_eq!(m.template, "/api/{version}/users/{id}");
    /// assert_eq!(m.params.get("version"), Some("v2"));
    /// ```
    pub fn nest(&mut self, prefix: &str, other: Tree<T>) -> Result<(), InsertError> {
        check_prefix(prefix)?;
        let templates: Vec<String> = other
            .iter()
            .map(|(t, _)| nested_template(prefix, t))
            .collect();
        for t in &templates {
            self.check(t)?;
        }
        for (t, r) in templates.iter().zip(other.routes) {
            self.insert(t, r.value)?;
        }
        Ok(())
    }

    /// Consumes the tree into `(template, value)` pairs in insertion order.
    pub(crate) fn into_entries(self) -> Vec<(String, T)> {
        let Tree { text, routes, .. } = self;
        routes
            .into_iter()
            .map(|r| {
                let (o, l) = (r.template_off as usize, r.template_len as usize);
                (text.get(o..o + l).unwrap_or_default().to_owned(), r.value)
            })
            .collect()
    }

    /// The value of exactly this route (same segments, same names), if present.
    ///
    /// # Errors
    /// As for [`Tree::insert`] when the template is malformed or conflicts.
    pub(crate) fn route(&self, template: &str) -> Result<Option<&T>, InsertError> {
        let segments = parse(template)?;
        match self.locate(template, &segments)? {
            Located::Existing(route) => Ok(self.routes.get(route as usize).map(|r| &r.value)),
            Located::Vacant { .. } => Ok(None),
        }
    }

    /// Checks that `template` could be inserted, without inserting it.
    pub(crate) fn check(&self, template: &str) -> Result<(), InsertError> {
        let segments = parse(template)?;
        match self.locate(template, &segments)? {
            Located::Existing(route) => {
                Err(self.conflict_route(template, route, Conflict::Duplicate))
            }
            Located::Vacant { .. } => Ok(()),
        }
    }

    /// The value of exactly this route (same segments, same names), if present.
    ///
    /// # Errors
    /// As for [`Tree::insert`] when the template is malformed or conflicts.
    pub(crate) fn route_mut(&mut self, template: &str) -> Result<Option<&mut T>, InsertError> {
        let segments = parse(template)?;
        match self.locate(template, &segments)? {
            Located::Existing(route) => {
                Ok(self.routes.get_mut(route as usize).map(|r| &mut r.value))
            }
            Located::Vacant { .. } => Ok(None),
        }
    }

    /// Whether the path with its trailing slash toggled matches a route.
    pub(crate) fn matches_other_slash_form(&self, path: &str) -> bool {
        match path.strip_suffix('/') {
            Some(shorter) if !shorter.is_empty() => self.at(shorter).is_ok(),
            Some(_) => false,
            None => {
                let bytes = path.as_bytes();
                if bytes.first() != Some(&b'/') || bytes.len() >= NONE as usize - 1 {
                    return false;
                }
                let mut params = Params::new(&self.text, path);
                self.walk::<true>(bytes, ROOT, 1, &mut params).is_some()
            }
        }
    }

    /// The matcher. Segments are `path[pos..end]` with `end` the next `/` or the end; with
    /// `EXTRA` the path is read as if it had one more `/` at the end. `pos > limit` means every
    /// segment has been consumed.
    ///
    /// Priority is static, then parameter, then catch-all. Each node stands for one segment
    /// position, so each is visited at most once per lookup; the only way back up is returning
    /// from the recursion taken at a node that has both a matching static child and a
    /// parameter or catch-all child.
    #[inline]
    fn walk<const EXTRA: bool>(
        &self,
        path: &[u8],
        mut node: u32,
        mut pos: usize,
        params: &mut Params<'_, '_>,
    ) -> Option<u32> {
        let limit = path.len() + usize::from(EXTRA);
        loop {
            let n = self.nodes.get(node as usize)?;
            if pos > limit {
                return (n.route != NONE).then_some(n.route);
            }
            let mut end = None;
            if n.has_statics {
                let seg = scan(path, pos);
                end = Some(seg.end);
                if let Some(child) = self.edges.find(node, &seg, path, pos) {
                    if n.param == NONE && n.catch == NONE {
                        (node, pos) = (child, seg.end + 1);
                        continue;
                    }
                    let mark = params.len();
                    if let Some(route) = self.walk::<EXTRA>(path, child, seg.end + 1, params) {
                        return Some(route);
                    }
                    params.truncate(mark);
                }
            }
            if n.param != NONE {
                let end = end.unwrap_or_else(|| segment_end(path, pos));
                // A parameter matches a non-empty segment.
                if end == pos {
                    return None;
                }
                let p = self.nodes.get(n.param as usize)?;
                params.push(Raw {
                    name_off: p.name_off,
                    name_len: p.name_len,
                    start: pos as u32,
                    end: end as u32,
                });
                (node, pos) = (n.param, end + 1);
                continue;
            }
            // A catch-all matches the non-empty rest of the path.
            if n.catch != NONE && pos < limit {
                let c = self.nodes.get(n.catch as usize)?;
                params.push(Raw {
                    name_off: c.name_off,
                    name_len: c.name_len,
                    start: pos as u32,
                    end: path.len() as u32,
                });
                return (c.route != NONE).then_some(c.route);
            }
            return None;
        }
    }

    /// Follows `segments` as far as the tree goes, checking each conflict rule on the way.
    fn locate(&self, template: &str, segments: &[Segment<'_>]) -> Result<Located, InsertError> {
        if self.nodes.is_empty() {
            return Ok(Located::Vacant {
                node: ROOT,
                depth: 0,
            });
        }
        let mut node = ROOT;
        for (depth, segment) in segments.iter().enumerate() {
            let n = self.nodes[node as usize];
            let next = match segment {
                Segment::Static(label) => self.edges.find_label(node, label.as_bytes()),
                Segment::Param(name) => {
                    if n.catch != NONE {
                        return Err(self.conflict(template, n.catch, Conflict::CatchAllParam));
                    }
                    if n.param != NONE && self.name(n.param) != *name {
                        return Err(self.conflict(template, n.param, Conflict::ParamName));
                    }
                    Some(n.param).filter(|&p| p != NONE)
                }
                Segment::CatchAll(name) => {
                    if n.param != NONE {
                        return Err(self.conflict(template, n.param, Conflict::CatchAllParam));
                    }
                    if n.catch != NONE && self.name(n.catch) != *name {
                        return Err(self.conflict(template, n.catch, Conflict::ParamName));
                    }
                    Some(n.catch).filter(|&c| c != NONE)
                }
            };
            match next {
                Some(child) => node = child,
                None => return Ok(Located::Vacant { node, depth }),
            }
        }
        Ok(match self.nodes[node as usize].route {
            NONE => Located::Vacant {
                node,
                depth: segments.len(),
            },
            route => Located::Existing(route),
        })
    }

    /// Adds the nodes for `segments[depth..]` below `node` and the route at the last one.
    fn build(
        &mut self,
        template: &str,
        segments: &[Segment<'_>],
        mut node: u32,
        depth: usize,
        value: T,
    ) -> Result<(), InsertError> {
        let rest = segments.get(depth..).unwrap_or_default();
        let names: usize = rest
            .iter()
            .map(|s| match s {
                Segment::Param(n) | Segment::CatchAll(n) => n.len(),
                Segment::Static(_) => 0,
            })
            .sum();
        let fits = |n: usize| n < NONE as usize;
        if !fits(self.text.len() + template.len() + names)
            || !fits(self.nodes.len() + rest.len() + 1)
            || !fits(self.routes.len() + 1)
        {
            return Err(InsertError::malformed_at(template, 0, Malformed::TooLarge));
        }
        if self.nodes.is_empty() {
            self.nodes.push(NODE);
        }
        for segment in rest {
            let child = self.nodes.len() as u32;
            let mut new = NODE;
            match segment {
                Segment::Static(label) => {
                    if !self.edges.insert(node, label.as_bytes(), child) {
                        return Err(InsertError::malformed_at(template, 0, Malformed::TooLarge));
                    }
                    self.nodes[node as usize].has_statics = true;
                }
                Segment::Param(name) | Segment::CatchAll(name) => {
                    new.name_off = self.text.len() as u32;
                    new.name_len = name.len() as u32;
                    self.text.push_str(name);
                    let parent = &mut self.nodes[node as usize];
                    match segment {
                        Segment::Param(_) => parent.param = child,
                        _ => parent.catch = child,
                    }
                }
            }
            self.nodes.push(new);
            node = child;
        }
        let template_off = self.text.len() as u32;
        self.text.push_str(template);
        self.nodes[node as usize].route = self.routes.len() as u32;
        self.routes.push(Route {
            value,
            template_off,
            template_len: template.len() as u32,
        });
        Ok(())
    }

    fn name(&self, node: u32) -> &str {
        let n = &self.nodes[node as usize];
        let (o, l) = (n.name_off as usize, n.name_len as usize);
        self.text.get(o..o + l).unwrap_or_default()
    }

    fn template_of(&self, r: &Route<T>) -> &str {
        let (o, l) = (r.template_off as usize, r.template_len as usize);
        self.text.get(o..o + l).unwrap_or_default()
    }

    /// A conflict with some route that goes through `node` (every node leads to a route).
    fn conflict(&self, template: &str, mut node: u32, kind: Conflict) -> InsertError {
        let route = loop {
            let n = &self.nodes[node as usize];
            node = match () {
                _ if n.route != NONE => break n.route,
                _ if n.param != NONE => n.param,
                _ if n.catch != NONE => n.catch,
                _ => match self.edges.any_child(node) {
                    Some(child) => child,
                    None => break NONE,
                },
            };
        };
        self.conflict_route(template, route, kind)
    }

    fn conflict_route(&self, template: &str, route: u32, kind: Conflict) -> InsertError {
        let with = self
            .routes
            .get(route as usize)
            .map(|r| self.template_of(r))
            .unwrap_or_default();
        InsertError::Conflict {
            template: template.into(),
            with: with.into(),
            kind,
        }
    }
}

/// Checks a nesting prefix: `/`, or a template without a catch-all or trailing `/`.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), InsertError> {
    if prefix == "/" {
        return Ok(());
    }
    let segments = parse(prefix)?;
    let bad = prefix.ends_with('/') || segments.iter().any(|s| matches!(s, Segment::CatchAll(_)));
    if bad {
        return Err(InsertError::malformed_at(
            prefix,
            prefix.len() - 1,
            Malformed::InvalidPrefix,
        ));
    }
    Ok(())
}

/// The template a route `/r` of a nested tree gets under a checked `prefix`.
pub(crate) fn nested_template(prefix: &str, template: &str) -> String {
    match (prefix, template) {
        ("/", t) => t.to_owned(),
        (p, "/") => p.to_owned(),
        (p, t) => format!("{p}{t}"),
    }
}

impl<T> fmt::Debug for Tree<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(t, _)| t)).finish()
    }
}
