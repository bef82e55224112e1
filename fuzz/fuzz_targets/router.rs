#![no_main]
//! Insert arbitrary templates, then match arbitrary paths: no panic, and every successful match
//! is consistent (its parameters are slices of the path, its template was inserted).
//!
//! Input: lines. Lines before the first empty line are templates (tried on a `Tree` and a
//! `MethodRouter`, errors ignored); the rest are paths. A leading byte picks the method.
use libfuzzer_sys::fuzz_target;
use peregrine::router::{MethodRouter, Resolution, Tree};
use peregrine::{Method, STANDARD_METHODS};

fuzz_target!(|data: &[u8]| {
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let mut tree = Tree::new();
    let mut router = MethodRouter::new();
    router.set_redirect_trailing_slash(first & 1 == 1);
    let mut inserted = Vec::new();
    for (i, t) in lines.by_ref().take_while(|l| !l.is_empty()).take(64).enumerate() {
        if tree.insert(t, i).is_ok() {
            inserted.push(t.to_owned());
        }
        let method = STANDARD_METHODS[(i + usize::from(first)) % STANDARD_METHODS.len()];
        let _ = router.insert(t, method, i);
        let _ = router.insert_extension(t, "PURGE", i);
    }
    let mut nested = Tree::new();
    for t in &inserted {
        let _ = nested.insert(t, 0);
    }
    let _ = tree.clone().nest("/n/{v}", nested);
    for path in lines.take(64) {
        if let Ok(m) = tree.at(path) {
            assert!(inserted.iter().any(|t| t == m.template));
            for (n, v) in m.params.iter() {
                let start = v.as_ptr() as usize - path.as_ptr() as usize;
                assert!(start + v.len() <= path.len());
                assert!(!v.is_empty());
                let _ = m.params.decoded(n);
            }
        }
        let method = STANDARD_METHODS[usize::from(first >> 1) % STANDARD_METHODS.len()];
        match router.resolve(method, path) {
            Resolution::Found { params, .. } => {
                let _ = params.iter().count();
            }
            Resolution::MethodNotAllowed { allow } | Resolution::Options { allow } => {
                assert!(allow.contains(Method::Options));
                let _ = allow.to_string();
            }
            Resolution::RedirectTrailingSlash { location } => {
                assert_ne!(location.to_string(), path);
            }
            Resolution::NotFound => {}
        }
        let _ = router.resolve_extension("PURGE", path);
    }
});
