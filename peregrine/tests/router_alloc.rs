//! Lookups allocate nothing: a counting global allocator around `Tree::at` and
//! `MethodRouter::resolve` for every kind of resolution.

#[path = "support/thread_allocs.rs"]
mod thread_allocs;

use peregrine::Method;
use peregrine::router::{MethodRouter, Resolution, Tree};

#[global_allocator]
static GLOBAL: thread_allocs::Counting = thread_allocs::Counting;

fn allocations(f: impl FnOnce()) -> usize {
    let before = thread_allocs::allocations();
    f();
    thread_allocs::allocations() - before
}

#[test]
fn lookups_do_not_allocate() {
    let mut tree = Tree::new();
    let mut router = MethodRouter::new();
    router.set_redirect_trailing_slash(true);
    let templates = [
        "/",
        "/users/new",
        "/users/{id}",
        "/users/{id}/posts/{post}",
        "/repos/{owner}/{repo}/pulls/{number}/comments",
        "/a/b/c",
        "/a/{x}/d",
        "/static/{*file}",
        "/dir/",
        "/a-rather-long-static-segment/{p1}/{p2}/{p3}/{p4}/{p5}/{p6}/{p7}/{p8}",
    ];
    for (i, t) in templates.iter().enumerate() {
        tree.insert(t, i).unwrap();
        router.insert(t, Method::Get, i).unwrap();
    }
    router.insert_extension("/users/{id}", "PURGE", 99).unwrap();
    let paths = [
        "/",
        "/users/new",
        "/users/42",
        "/users/42/posts/7",
        "/repos/rust-lang/rust/pulls/123/comments",
        "/a/b/d",
        "/static/css/site.css",
        "/a-rather-long-static-segment/1/2/3/4/5/6/7/8",
        "/nope",
        "/users/42/",
        "/dir",
        "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
        "not-a-path",
        "",
    ];
    let mut found = 0;
    let n = allocations(|| {
        for _ in 0..100 {
            for p in paths {
                if let Ok(m) = std::hint::black_box(&tree).at(p) {
                    found += 1;
                    std::hint::black_box(m.params.get("id"));
                    std::hint::black_box(m.params.decoded("post").ok());
                    std::hint::black_box(m.params.iter().count());
                }
                for method in [Method::Get, Method::Head, Method::Post, Method::Options] {
                    match std::hint::black_box(&router).resolve(method, p) {
                        Resolution::Found { value, params, .. } => {
                            std::hint::black_box((value, params.len()));
                        }
                        Resolution::MethodNotAllowed { allow } | Resolution::Options { allow } => {
                            std::hint::black_box(allow.iter().count());
                        }
                        Resolution::RedirectTrailingSlash { location } => {
                            std::hint::black_box(location.base());
                        }
                        Resolution::NotFound => {}
                    }
                }
                std::hint::black_box(router.resolve_extension("PURGE", p));
            }
        }
    });
    assert_eq!(found, 100 * 8);
    assert_eq!(n, 0, "allocations during {} lookups", 100 * paths.len() * 6);

    // The counter works: a route with more than 8 parameters spills to the heap.
    let mut big = Tree::new();
    big.insert("/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}", ()).unwrap();
    assert!(allocations(|| assert!(big.at("/1/2/3/4/5/6/7/8/9").is_ok())) > 0);
}
