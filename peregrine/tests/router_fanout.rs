//! Wide trees: nodes with hundreds of static children, whose blocks of children move to
//! bigger ones as they grow (`router/edges.rs`), each child carrying its own subtree (static
//! children, a parameter child, a catch-all, a route) along. Every route must still match after
//! every move, with the right parameters, and every conflict rule must still see the moved
//! nodes.

use peregrine::router::{Conflict, Tree};

/// (template, a path it matches, that path's parameters).
type Route = (String, String, Vec<(&'static str, String)>);

/// A label of 3 to 17 bytes (labels over 8 bytes keep their rest in the tails).
fn word(i: usize) -> String {
    format!("w{i}x{}", "y".repeat(i % 11))
}

/// Each word with a route, a parameter child (with its own static child), several static
/// children (one with a catch-all, one with an empty segment), inserted word after word: the
/// root's block moves (every word node with it, subtree attached) while later words are added.
fn templates() -> Vec<Route> {
    let mut out = Vec::new();
    for i in 0..700 {
        let w = word(i);
        out.push((format!("/{w}"), format!("/{w}"), vec![]));
        out.push((format!("/{w}/{{id}}"), format!("/{w}/7{i}"), vec![("id", format!("7{i}"))]));
        for j in 0..5 {
            out.push((format!("/{w}/s{j}"), format!("/{w}/s{j}"), vec![]));
        }
        out.push((
            format!("/{w}/s2/{{*rest}}"),
            format!("/{w}/s2/a/b{i}"),
            vec![("rest", format!("a/b{i}"))],
        ));
        out.push((format!("/{w}/s4/"), format!("/{w}/s4/"), vec![]));
        out.push((
            format!("/{w}/{{id}}/leaf{i}"),
            format!("/{w}/x/leaf{i}"),
            vec![("id", "x".to_owned())],
        ));
    }
    out
}

#[test]
fn every_route_matches_after_its_ancestors_moved() {
    let routes = templates();
    let mut t = Tree::new();
    for (n, (template, _, _)) in routes.iter().enumerate() {
        t.insert(template, n).unwrap_or_else(|e| panic!("{e}"));
        // Spot-check earlier routes while blocks are still moving.
        if n % 997 == 0 {
            for (m, (_, path, _)) in routes.iter().enumerate().take(n + 1) {
                assert_eq!(t.at(path).map(|r| *r.value), Ok(m), "{path} after {n} inserts");
            }
        }
    }
    for (n, (template, path, params)) in routes.iter().enumerate() {
        let m = t.at(path).unwrap_or_else(|_| panic!("{path}"));
        assert_eq!((*m.value, m.template), (n, template.as_str()), "{path}");
        let got: Vec<(&str, &str)> = m.params.iter().collect();
        let want: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(got, want, "{path}");
    }
    assert_eq!(t.len(), routes.len());
}

#[test]
fn misses_and_conflicts_see_moved_nodes() {
    struct Case {
        template: String,
        expect: Option<Conflict>,
    }
    let mut t = Tree::new();
    for (n, (template, _, _)) in templates().iter().enumerate() {
        t.insert(template, n).unwrap_or_else(|e| panic!("{e}"));
    }
    let (w5, w10, w699) = (word(5), word(10), word(699));
    let cases = [
        Case { template: format!("/{w5}"), expect: Some(Conflict::Duplicate) },
        Case { template: format!("/{w699}/{{name}}"), expect: Some(Conflict::ParamName) },
        Case { template: format!("/{w10}/{{*all}}"), expect: Some(Conflict::CatchAllParam) },
        Case { template: format!("/{w10}/s2/{{x}}"), expect: Some(Conflict::CatchAllParam) },
        Case { template: format!("/{w10}/s4/"), expect: Some(Conflict::Duplicate) },
        Case { template: format!("/{w10}/s4/new"), expect: None },
        Case { template: "/w700x".to_owned(), expect: None },
    ];
    for c in &cases {
        let got = t.insert(&c.template, usize::MAX).err().and_then(|e| e.conflict());
        assert_eq!(got, c.expect, "{}", c.template);
    }
    // Near misses of moved labels (one byte short, one long, a different last byte) and of
    // their subtrees.
    let (w12, w16) = (word(12), word(16));
    let paths = [
        "/w5xyyyy".to_owned(),
        "/w5xyyyyyy".to_owned(),
        "/w5xyyyyz".to_owned(),
        format!("/{w16}/s9/zz"),
        format!("/{w12}/s4/extra/x"),
    ];
    for path in &paths {
        assert!(t.at(path).is_err(), "{path}");
    }
}
