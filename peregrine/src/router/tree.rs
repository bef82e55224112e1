//! The path tree: one arena of nodes (see [`super::edges`]), one text arena.
//!
//! A node stands for a position after some segments of a template. It has up to three kinds of
//! children: static ones, at most one parameter child and at most one catch-all child (a
//! parameter and a catch-all never share a node: the conflict rules forbid it). A node at the
//! end of a template holds that route's index. A node reached by a static edge holds that
//! edge's label, so the label is read together with the node the lookup needs next anyway.

use std::fmt;

use super::edges::{Arena, MAX_SLOTS, NO_STATICS, NODE, NONE, Node};
use super::error::{Conflict, InsertError, Malformed, NotFound};
use super::params::{NameRef, Params, Span};
use super::segment::{first_word, hash_label, scan, segment_end};
use super::template::{Segment, parse};

const ROOT: u32 = 0;

#[derive(Clone, Debug)]
struct Route<T> {
    value: T,
    template_off: u32,
    template_len: u32,
    /// This route's parameter names, in order: `Tree::param_names[names..names + count]`.
    names: u32,
    count: u32,
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
    /// The nodes; the root is slot 0.
    arena: Arena,
    /// Bytes `8..` of static labels longer than 8 bytes.
    tails: Vec<u8>,
    /// Parameter names and templates.
    text: String,
    /// Every route's parameter names, route after route (see `Route::names`).
    param_names: Vec<NameRef>,
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
            arena: Arena::default(),
            tails: Vec::new(),
            text: String::new(),
            param_names: Vec::new(),
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
        let route = self.walk::<false>(bytes, ROOT, 1, &mut params).ok_or(NotFound)?;
        let r = self.routes.get(route as usize).ok_or(NotFound)?;
        let (first, count) = (r.names as usize, r.count as usize);
        params.set_names(self.param_names.get(first..first + count).unwrap_or_default());
        Ok(Match { value: &r.value, params, template: self.template_of(r) })
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
        let templates: Vec<String> =
            other.iter().map(|(t, _)| nested_template(prefix, t)).collect();
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
            let n = self.arena.nodes.get(node as usize)?;
            if pos > limit {
                return (n.route != NONE).then_some(n.route);
            }
            let mut end = None;
            if n.statics != NO_STATICS {
                let (seg_end, word) = scan(path, pos);
                end = Some(seg_end);
                let child =
                    self.arena.static_child(n.statics, &self.tails, path, pos, seg_end, word);
                if let Some(child) = child {
                    if n.param == NONE && n.catch == NONE {
                        (node, pos) = (child, seg_end + 1);
                        continue;
                    }
                    let mark = params.len();
                    if let Some(route) = self.walk::<EXTRA>(path, child, seg_end + 1, params) {
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
                params.push(Span { start: pos as u32, end: end as u32 });
                (node, pos) = (n.param, end + 1);
                continue;
            }
            // A catch-all matches the non-empty rest of the path.
            if n.catch != NONE && pos < limit {
                let c = self.arena.nodes.get(n.catch as usize)?;
                params.push(Span { start: pos as u32, end: path.len() as u32 });
                return (c.route != NONE).then_some(c.route);
            }
            return None;
        }
    }

    /// Follows `segments` as far as the tree goes, checking each conflict rule on the way.
    fn locate(&self, template: &str, segments: &[Segment<'_>]) -> Result<Located, InsertError> {
        if self.arena.nodes.is_empty() {
            return Ok(Located::Vacant { node: ROOT, depth: 0 });
        }
        let mut node = ROOT;
        for (depth, segment) in segments.iter().enumerate() {
            let n = self.arena.nodes[node as usize];
            let next = match segment {
                Segment::Static(label) => {
                    let label = label.as_bytes();
                    let (word, end) = (first_word(label), label.len());
                    match n.statics {
                        NO_STATICS => None,
                        statics => {
                            self.arena.static_child(statics, &self.tails, label, 0, end, word)
                        }
                    }
                }
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
        Ok(match self.arena.nodes[node as usize].route {
            NONE => Located::Vacant { node, depth: segments.len() },
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
        // Names are stored for new nodes and again for the route.
        let names: usize = segments
            .iter()
            .map(|s| match s {
                Segment::Param(n) | Segment::CatchAll(n) => n.len(),
                Segment::Static(_) => 0,
            })
            .sum::<usize>()
            * 2;
        let fits = |n: usize| n < NONE as usize;
        if !fits(self.text.len() + template.len() + names)
            // A block move takes at most twice the slots there are, then one slot per segment.
            || self.arena.nodes.len() * 3 + rest.len() + 8 >= MAX_SLOTS
            || !fits(self.tails.len() + template.len())
            || !fits(self.routes.len() + 1)
            || !fits(self.param_names.len() + segments.len())
        {
            return Err(InsertError::malformed_at(template, 0, Malformed::TooLarge));
        }
        if self.arena.nodes.is_empty() {
            self.arena.push(NODE);
        }
        for segment in rest {
            node = match segment {
                Segment::Static(label) => {
                    let label = label.as_bytes();
                    let word = first_word(label);
                    let tail = self.tails.len() as u32;
                    let new = Node { word, len: label.len() as u32, tail, ..NODE };
                    self.tails.extend_from_slice(label.get(8..).unwrap_or_default());
                    let hash = hash_label(word, label);
                    self.arena.attach_static(node, new, hash, &self.tails)
                }
                Segment::Param(n) | Segment::CatchAll(n) => {
                    // A parameter node has no label: it holds its name instead.
                    let new = Node { tail: self.text.len() as u32, len: n.len() as u32, ..NODE };
                    self.text.push_str(n);
                    let child = self.arena.push(new);
                    let parent = &mut self.arena.nodes[node as usize];
                    match segment {
                        Segment::Param(_) => parent.param = child,
                        _ => parent.catch = child,
                    }
                    child
                }
            };
        }
        // The route's parameter names in order (the walk records only value spans).
        let names = self.param_names.len() as u32;
        let mut count = 0;
        for segment in segments {
            if let Segment::Param(n) | Segment::CatchAll(n) = segment {
                self.param_names.push((self.text.len() as u32, n.len() as u32));
                self.text.push_str(n);
                count += 1;
            }
        }
        let template_off = self.text.len() as u32;
        self.text.push_str(template);
        self.arena.nodes[node as usize].route = self.routes.len() as u32;
        let template_len = template.len() as u32;
        self.routes.push(Route { value, template_off, template_len, names, count });
        Ok(())
    }

    fn name(&self, node: u32) -> &str {
        let n = self.arena.nodes.get(node as usize).copied().unwrap_or(NODE);
        let (o, l) = (n.tail as usize, n.len as usize);
        self.text.get(o..o + l).unwrap_or_default()
    }

    fn template_of(&self, r: &Route<T>) -> &str {
        let (o, l) = (r.template_off as usize, r.template_len as usize);
        self.text.get(o..o + l).unwrap_or_default()
    }

    /// A conflict with some route that goes through `node` (every node leads to a route).
    fn conflict(&self, template: &str, mut node: u32, kind: Conflict) -> InsertError {
        let route = loop {
            let n = &self.arena.nodes[node as usize];
            node = match () {
                _ if n.route != NONE => break n.route,
                _ if n.param != NONE => n.param,
                _ if n.catch != NONE => n.catch,
                _ => match self.arena.any_static(node) {
                    Some(child) => child,
                    None => break NONE,
                },
            };
        };
        self.conflict_route(template, route, kind)
    }

    fn conflict_route(&self, template: &str, route: u32, kind: Conflict) -> InsertError {
        let with = self.routes.get(route as usize).map(|r| self.template_of(r)).unwrap_or_default();
        InsertError::Conflict { template: template.into(), with: with.into(), kind }
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
        return Err(InsertError::malformed_at(prefix, prefix.len() - 1, Malformed::InvalidPrefix));
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
