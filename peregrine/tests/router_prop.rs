//! Property test: `Tree` against a naive reference that tries every route.
//!
//! The reference shares no code with the router: it splits the path on `/`, tests each route
//! segment by segment, and picks among the matching routes the one whose sequence of segment
//! kinds is smallest with static < parameter < catch-all (the priority rule of the module docs).
//! Its conflict check compares the new route with every existing one.

use peregrine::Method;
use peregrine::router::{Conflict, InsertError, Malformed, MethodRouter, Resolution, Tree};
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Static(&'static str),
    Param(&'static str),
    Catch(&'static str),
}

/// (template text, label as it appears in a path)
const STATICS: &[(&str, &str)] = &[
    ("a", "a"),
    ("b", "b"),
    ("", ""),
    ("ab", "ab"),
    ("long-segment-xyz", "long-segment-xyz"),
    ("long-segment-xyw", "long-segment-xyw"),
    ("{{x}}", "{x}"),
];
const NAMES: &[&str] = &["x", "y", "z"];

#[derive(Clone, Debug)]
struct Route {
    segs: Vec<Seg>,
    template: String,
}

fn kind(s: &Seg) -> u8 {
    match s {
        Seg::Static(_) => 0,
        Seg::Param(_) => 1,
        Seg::Catch(_) => 2,
    }
}

fn label(template_text: &str) -> &'static str {
    STATICS.iter().find(|(t, _)| *t == template_text).map(|(_, l)| *l).unwrap()
}

fn seg_strategy() -> impl Strategy<Value = Seg> {
    prop_oneof![
        4 => proptest::sample::select(STATICS).prop_map(|(t, _)| Seg::Static(t)),
        2 => proptest::sample::select(NAMES).prop_map(Seg::Param),
    ]
}

fn route_strategy() -> impl Strategy<Value = Route> {
    (
        proptest::collection::vec(seg_strategy(), 1..5),
        proptest::option::weighted(0.25, proptest::sample::select(&["r", "s", "x"][..])),
    )
        .prop_map(|(mut segs, catch)| {
            if let Some(c) = catch {
                segs.push(Seg::Catch(c));
            }
            let template = segs
                .iter()
                .map(|s| match s {
                    Seg::Static(t) => format!("/{t}"),
                    Seg::Param(n) => format!("/{{{n}}}"),
                    Seg::Catch(n) => format!("/{{*{n}}}"),
                })
                .collect();
            Route { segs, template }
        })
}

fn path_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        proptest::sample::select(STATICS).prop_map(|(_, l)| l.to_string()),
        Just("c".to_string()),
        Just("long-segment-xy".to_string()),
        Just("%41".to_string()),
    ];
    proptest::collection::vec(piece, 1..6).prop_map(|v| format!("/{}", v.join("/")))
}

/// Instantiates a route into a path that it matches.
fn path_of(route: &Route, fill: &str) -> String {
    route
        .segs
        .iter()
        .map(|s| match s {
            Seg::Static(t) => format!("/{}", label(t)),
            Seg::Param(_) => format!("/{fill}"),
            Seg::Catch(_) => format!("/{fill}/{fill}"),
        })
        .collect()
}

/// The reference matcher: the route's captures if it matches `path`.
fn ref_match(route: &Route, path: &str) -> Option<Vec<(String, String)>> {
    let rest = path.strip_prefix('/')?;
    let pieces: Vec<&str> = rest.split('/').collect();
    let mut offset = 1; // byte offset of pieces[i] in path
    let mut caps = Vec::new();
    for (i, seg) in route.segs.iter().enumerate() {
        match seg {
            Seg::Catch(n) => {
                if i >= pieces.len() || offset >= path.len() {
                    return None;
                }
                caps.push((n.to_string(), path[offset..].to_string()));
                return Some(caps);
            }
            Seg::Static(t) => {
                if pieces.get(i) != Some(&label(t)) {
                    return None;
                }
            }
            Seg::Param(n) => {
                let p = pieces.get(i).filter(|p| !p.is_empty())?;
                caps.push((n.to_string(), p.to_string()));
            }
        }
        offset += pieces[i].len() + 1;
    }
    (pieces.len() == route.segs.len()).then_some(caps)
}

fn ref_lookup<'r>(routes: &'r [Route], path: &str) -> Option<(&'r Route, Vec<(String, String)>)> {
    routes
        .iter()
        .filter_map(|r| ref_match(r, path).map(|c| (r, c)))
        .min_by(|(a, _), (b, _)| a.segs.iter().map(kind).cmp(b.segs.iter().map(kind)))
}

/// The reference conflict check of `new` against `old`: the position and rule broken, if any.
fn ref_conflict(old: &Route, new: &Route) -> Option<(usize, Conflict)> {
    for i in 0.. {
        match (old.segs.get(i), new.segs.get(i)) {
            (None, None) => return Some((i, Conflict::Duplicate)),
            (None, _) | (_, None) => return None,
            (Some(Seg::Static(a)), Some(Seg::Static(b))) if a == b => {}
            (Some(Seg::Static(_)), _) | (_, Some(Seg::Static(_))) => return None,
            (Some(Seg::Param(a)), Some(Seg::Param(b)))
            | (Some(Seg::Catch(a)), Some(Seg::Catch(b))) => {
                if a != b {
                    return Some((i, Conflict::ParamName));
                }
            }
            _ => return Some((i, Conflict::CatchAllParam)),
        }
    }
    None
}

fn has_duplicate_name(r: &Route) -> bool {
    let names: Vec<_> = r
        .segs
        .iter()
        .filter_map(|s| match s {
            Seg::Param(n) | Seg::Catch(n) => Some(n),
            Seg::Static(_) => None,
        })
        .collect();
    (1..names.len()).any(|i| names[..i].contains(&names[i]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn tree_agrees_with_reference(
        candidates in proptest::collection::vec(route_strategy(), 1..14),
        paths in proptest::collection::vec(path_strategy(), 0..24),
        fill in proptest::sample::select(&["a", "b", "q", "long-segment-xyz", "{x}"][..]),
    ) {
        let mut tree = Tree::new();
        let mut methods = MethodRouter::new();
        methods.set_redirect_trailing_slash(true);
        let mut accepted: Vec<Route> = Vec::new();
        for (i, cand) in candidates.iter().enumerate() {
            let got = tree.insert(&cand.template, i);
            if has_duplicate_name(cand) {
                prop_assert_eq!(got.unwrap_err().malformed(), Some(Malformed::DuplicateName));
                continue;
            }
            let conflicts: Vec<_> = accepted
                .iter()
                .filter_map(|old| ref_conflict(old, cand).map(|c| (c, old)))
                .collect();
            match conflicts.iter().map(|(c, _)| *c).min_by_key(|(pos, _)| *pos) {
                None => {
                    prop_assert!(got.is_ok(), "{} after {:?}: {:?}", cand.template, accepted, got);
                    methods.insert(&cand.template, Method::Get, i).unwrap();
                    accepted.push(cand.clone());
                }
                Some((pos, kind)) => {
                    let Err(InsertError::Conflict { template, with, kind: k }) = got else {
                        panic!("{} after {:?}: expected {kind:?}, got {got:?}", cand.template, accepted);
                    };
                    prop_assert_eq!(&*template, cand.template.as_str());
                    prop_assert_eq!(k, kind);
                    let named = conflicts.iter().any(|(c, old)| *c == (pos, kind) && *old.template == *with);
                    prop_assert!(named, "{} named {} among {:?}", cand.template, with, conflicts);
                    prop_assert!(methods.insert(&cand.template, Method::Get, i).is_err());
                }
            }
        }
        prop_assert_eq!(tree.len(), accepted.len());

        let derived: Vec<String> = accepted.iter().map(|r| path_of(r, fill)).collect();
        for path in paths.iter().chain(&derived) {
            let want = ref_lookup(&accepted, path);
            let got = tree.at(path).ok();
            match (&want, &got) {
                (None, None) => {}
                (Some((r, caps)), Some(m)) => {
                    prop_assert_eq!(m.template, r.template.as_str(), "path {}", path);
                    let got_caps: Vec<(String, String)> =
                        m.params.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
                    prop_assert_eq!(&got_caps, caps, "path {}", path);
                }
                _ => prop_assert!(false, "path {}: want {:?}, got {:?}", path, want.map(|w| &w.0.template), got.map(|m| m.template)),
            }
            // The method router agrees, including the trailing-slash redirect.
            let resolved = methods.resolve(Method::Get, path);
            match (&want, resolved) {
                (Some((r, _)), Resolution::Found { template, .. }) => prop_assert_eq!(template, r.template.as_str()),
                (None, Resolution::RedirectTrailingSlash { location }) => {
                    let other = location.to_string();
                    prop_assert!(ref_lookup(&accepted, &other).is_some(), "{} -> {}", path, other);
                    prop_assert_ne!(&other, path);
                    prop_assert_eq!(other.trim_end_matches('/'), path.trim_end_matches('/'));
                }
                (None, Resolution::NotFound) => {
                    let other = match path.strip_suffix('/') {
                        Some(s) => s.to_string(),
                        None => format!("{path}/"),
                    };
                    prop_assert!(other.is_empty() || ref_lookup(&accepted, &other).is_none(), "{} should redirect to {}", path, other);
                }
                (w, r) => prop_assert!(false, "path {}: want {:?}, resolved {:?}", path, w.as_ref().map(|w| &w.0.template), r),
            }
        }
    }

    /// Any string: lookups never panic, and agree with the reference on the accepted routes.
    #[test]
    fn arbitrary_paths_never_panic(path in ".{0,40}", raw in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut tree = Tree::new();
        for t in ["/", "/a/{x}", "/a/b/{*r}", "/{y}/c", "/long-segment-xyz/{x}"] {
            tree.insert(t, ()).unwrap();
        }
        let _ = tree.at(&path);
        let lossy = String::from_utf8_lossy(&raw);
        let _ = tree.at(&lossy);
        let _ = tree.at(&format!("/{lossy}"));
    }
}
