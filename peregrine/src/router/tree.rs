//! The path tree: one arena of nodes, one hash table of static edges, one text arena.
//!
//! A node stands for a position after some segments of a template. It has up to three kinds of
//! children: static ones, at most one parameter child and at most one catch-all child (a
//! parameter and a catch-all never share a node: the conflict rules forbid it). A node at the
//! end of a template holds that route's index. A node reached by a static edge holds that
//! edge's label, so the label is read together with the node the lookup needs next anyway.

use std::fmt;

use super::edges::Edges;
use super::error::{Conflict, InsertError, Malformed, NotFound};
use super::params::{NameRef, Params, Span};
use super::segment::{first_word, hash_label, scan, segment_end};
use super::template::{Segment, parse};

/// "No such child / no route here".
const NONE: u32 = u32::MAX;
const ROOT: u32 = 0;

/// `Node::statics`: no static child.
const NO_STATICS: u32 = 0;
/// `Node::statics`: flag on a single static child's index.
const SINGLE: u32 = 1 << 31;
/// `Node::statics`: two or more static children, in [`Edges`].
const MANY: u32 = u32::MAX;

/// What a lookup reads at each node: 32 bytes, two to a cache line. The parameter name of a
/// parameter or catch-all node is only needed at insert time and lives in `Tree::node_names`.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// First 8 bytes of the label of the static edge into this node (zero-padded).
    word: u64,
    /// Length of that label.
    len: u32,
    /// Offset in `Tree::tails` of that label's bytes `8..`.
    tail: u32,
    param: u32,
    catch: u32,
    route: u32,
    /// [`NO_STATICS`], `child | SINGLE` (compared directly: most nodes have one static child
    /// and then no hashing happens), or [`MANY`].
    statics: u32,
}

const NODE: Node =
    Node { word: 0, len: 0, tail: 0, param: NONE, catch: NONE, route: NONE, statics: NO_STATICS };

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
    nodes: Vec<Node>,
    /// Parallel to `nodes`: the name of a parameter or catch-all node, in `text`.
    node_names: Vec<NameRef>,
    /// Static children of nodes with more than one.
    edges: Edges,
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
            nodes: Vec::new(),
            node_names: Vec::new(),
            edges: Edges::default(),
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
            let n = self.nodes.get(node as usize)?;
            if pos > limit {
                return (n.route != NONE).then_some(n.route);
            }
            let mut end = None;
            if n.statics != NO_STATICS {
                let (seg_end, word) = scan(path, pos);
                end = Some(seg_end);
                if let Some(child) = self.static_child(node, n.statics, path, pos, seg_end, word) {
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
                let c = self.nodes.get(n.catch as usize)?;
                params.push(Span { start: pos as u32, end: path.len() as u32 });
                return (c.route != NONE).then_some(c.route);
            }
            return None;
        }
    }

    /// The static child of `node` labelled `path[start..end]` (whose first word is `word`).
    #[inline(always)]
    fn static_child(
        &self,
        node: u32,
        statics: u32,
        path: &[u8],
        start: usize,
        end: usize,
        word: u64,
    ) -> Option<u32> {
        if statics != MANY {
            let child = statics & !SINGLE;
            return self.is_label(child, path, start, end, word).then_some(child);
        }
        // `start` is one past the end for the empty segment after a virtual trailing slash.
        let hash = hash_label(word, path.get(start..end).unwrap_or_default());
        self.edges.find(node, hash, |child| self.is_label(child, path, start, end, word))
    }

    /// Whether the label into `child` is `path[start..end]`.
    #[inline(always)]
    fn is_label(&self, child: u32, path: &[u8], start: usize, end: usize, word: u64) -> bool {
        let Some(c) = self.nodes.get(child as usize) else {
            return false;
        };
        let len = end - start;
        if c.word != word || c.len as usize != len {
            return false;
        }
        len <= 8 || {
            let t = c.tail as usize;
            self.tails.get(t..t + len - 8) == path.get(start + 8..end)
        }
    }

    /// Follows `segments` as far as the tree goes, checking each conflict rule on the way.
    fn locate(&self, template: &str, segments: &[Segment<'_>]) -> Result<Located, InsertError> {
        if self.nodes.is_empty() {
            return Ok(Located::Vacant { node: ROOT, depth: 0 });
        }
        let mut node = ROOT;
        for (depth, segment) in segments.iter().enumerate() {
            let n = self.nodes[node as usize];
            let next = match segment {
                Segment::Static(label) => {
                    let label = label.as_bytes();
                    let (word, end) = (first_word(label), label.len());
                    match n.statics {
                        NO_STATICS => None,
                        statics => self.static_child(node, statics, label, 0, end, word),
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
        Ok(match self.nodes[node as usize].route {
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
            || self.nodes.len() + rest.len() + 1 >= SINGLE as usize
            || !fits(self.tails.len() + template.len())
            || !fits(self.routes.len() + 1)
            || !fits(self.param_names.len() + segments.len())
        {
            return Err(InsertError::malformed_at(template, 0, Malformed::TooLarge));
        }
        if self.nodes.is_empty() {
            self.nodes.push(NODE);
            self.node_names.push((0, 0));
        }
        for segment in rest {
            let child = self.nodes.len() as u32;
            let mut name = (0, 0);
            let mut new = NODE;
            match segment {
                Segment::Static(label) => {
                    let label = label.as_bytes();
                    let word = first_word(label);
                    new.word = word;
                    new.len = label.len() as u32;
                    new.tail = self.tails.len() as u32;
                    self.tails.extend_from_slice(label.get(8..).unwrap_or_default());
                    let hash = hash_label(word, label);
                    self.attach_static(node, child, hash);
                }
                Segment::Param(n) | Segment::CatchAll(n) => {
                    name = (self.text.len() as u32, n.len() as u32);
                    self.text.push_str(n);
                    let parent = &mut self.nodes[node as usize];
                    match segment {
                        Segment::Param(_) => parent.param = child,
                        _ => parent.catch = child,
                    }
                }
            }
            self.nodes.push(new);
            self.node_names.push(name);
            node = child;
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
        self.nodes[node as usize].route = self.routes.len() as u32;
        let template_len = template.len() as u32;
        self.routes.push(Route { value, template_off, template_len, names, count });
        Ok(())
    }

    /// Records `child` (label hash `hash`) as a static child of `parent`. The second static
    /// child moves both into the hash table.
    fn attach_static(&mut self, parent: u32, child: u32, hash: u32) {
        let statics = self.nodes[parent as usize].statics;
        self.nodes[parent as usize].statics = match statics {
            NO_STATICS => child | SINGLE,
            MANY => {
                self.edges.insert(parent, hash, child);
                MANY
            }
            single => {
                let first = single & !SINGLE;
                let f = self.nodes[first as usize];
                let (t, l) = (f.tail as usize, f.len as usize);
                let mut label = f.word.to_le_bytes()[..l.min(8)].to_vec();
                label.extend_from_slice(
                    self.tails.get(t..t + l.saturating_sub(8)).unwrap_or_default(),
                );
                self.edges.insert(parent, hash_label(f.word, &label), first);
                self.edges.insert(parent, hash, child);
                MANY
            }
        };
    }

    fn name(&self, node: u32) -> &str {
        let (o, l) = self.node_names.get(node as usize).copied().unwrap_or_default();
        let (o, l) = (o as usize, l as usize);
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
                _ => match n.statics {
                    NO_STATICS => break NONE,
                    MANY => match self.edges.any_child(node) {
                        Some(child) => child,
                        None => break NONE,
                    },
                    single => single & !SINGLE,
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
