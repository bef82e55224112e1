//! Directory listings: read once per directory version into a sorted cache, served a page
//! at a time as HTML or JSON.
//!
//! Reading a directory costs one `readdir` pass and one `stat` per entry: for 100,000 entries
//! about a hundred milliseconds. So a listing is built once and kept, checked on every request
//! against the directory's modification time (any entry added, removed or renamed changes it;
//! the directory was just opened and `fstat`ed to get here, so this costs nothing), and
//! rebuilt after a time-to-live that grows with what the build cost (1 s plus 100 times the
//! build time, at most a minute: sizes and dates of files changed in place, which do not touch
//! the directory, show up within it, and rebuilding stays under 1 % of a core). A build runs
//! once per directory at a time; concurrent requests wait for it. The server's handler runs a
//! build off the worker, on the blocking pool (see `ServeDir`'s `Handler` impl), so a huge
//! directory does not stall the other connections of its worker; a page is then bounded work:
//! at most [`PER_PAGE`] entries, in one of three orders computed at build time.

mod build;
mod query;
mod render;
mod text;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;

use build::Listing;
pub(crate) use text::display_name;

/// Entries on one page.
pub(crate) const PER_PAGE: usize = 1000;

/// Directories whose listings are kept at most; the oldest build goes first.
const MAX_DIRS: usize = 256;

/// Cached listings by real directory path; shared by clones of a `ServeDir`.
#[derive(Debug, Default)]
pub(crate) struct Listings {
    map: Mutex<HashMap<PathBuf, Arc<ListingCell>>>,
}

/// One directory's listing, cached; its lock is held while it is (re)built, so a build runs
/// once.
#[derive(Debug, Default)]
struct ListingCell {
    listing: Mutex<Option<Arc<Listing>>>,
}

/// A directory to list: where it is and how to show it.
pub(crate) struct Dir<'a> {
    pub(crate) real: &'a Path,
    pub(crate) root: &'a Path,
    pub(crate) hide_dotfiles: bool,
    /// The directory's modification time, from the `fstat` done when it was opened.
    pub(crate) modified: Option<SystemTime>,
    /// The path as shown (`/docs/`).
    pub(crate) shown: &'a str,
}

/// A rendered page and whether it is JSON (else HTML).
pub(crate) type Rendered = (Bytes, bool);

fn fresh(l: &Listing, modified: Option<SystemTime>, now: Instant) -> bool {
    let ttl = (Duration::from_secs(1) + l.cost * 100).min(Duration::from_secs(60));
    l.dir_modified == modified && modified.is_some() && now.saturating_duration_since(l.built) < ttl
}

impl Listings {
    fn cell(&self, dir: &Path) -> Arc<ListingCell> {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = map.get(dir) {
            return s.clone();
        }
        if map.len() >= MAX_DIRS {
            // Drop the cell whose listing is oldest (or empty).
            let oldest = map
                .iter()
                .min_by_key(|(_, s)| {
                    s.listing.try_lock().ok().and_then(|l| l.as_ref().map(|l| l.built))
                })
                .map(|(p, _)| p.clone());
            if let Some(p) = oldest {
                map.remove(&p);
            }
        }
        map.entry(dir.to_owned()).or_default().clone()
    }

    /// The page `query` asks for. Without `may_block`, `Ok(None)` when the listing would have
    /// to be read first (the caller then calls again where blocking is fine).
    pub(crate) fn page(
        &self,
        dir: &Dir<'_>,
        query: &[u8],
        may_block: bool,
    ) -> io::Result<Option<Rendered>> {
        let cell = self.cell(dir.real);
        let now = Instant::now();
        let listing = {
            let guard = if may_block {
                cell.listing.lock().unwrap_or_else(PoisonError::into_inner)
            } else {
                match cell.listing.try_lock() {
                    Ok(g) => g,
                    // Being built: wait for it off the worker.
                    Err(_) => return Ok(None),
                }
            };
            let mut guard = guard;
            match guard.as_ref().filter(|l| fresh(l, dir.modified, now)) {
                Some(l) => l.clone(),
                None if !may_block => return Ok(None),
                None => {
                    let l =
                        Arc::new(build::read(dir.real, dir.root, dir.hide_dotfiles, dir.modified)?);
                    *guard = Some(l.clone());
                    l
                }
            }
        };
        Ok(Some(render_page(&listing, dir.shown, query::parse(query))))
    }
}

fn render_page(l: &Listing, shown: &str, mut view: query::View) -> Rendered {
    let total = l.entries.len();
    let pages = total.div_ceil(PER_PAGE).max(1);
    view.page = view.page.min(pages);
    let first = (view.page - 1) * PER_PAGE;
    let take = PER_PAGE.min(total - first);
    let index = |i: usize| -> usize {
        // Position `i` in the chosen order (reversed for descending).
        let i = if view.desc { total - 1 - i } else { i };
        match view.sort {
            query::Sort::Name => i,
            query::Sort::Size => l.by_size[i] as usize,
            query::Sort::Date => l.by_date[i] as usize,
        }
    };
    let entries = (first..first + take).map(|i| &l.entries[index(i)]).collect();
    let page = render::Page {
        shown,
        view,
        pages,
        total,
        per_page: PER_PAGE,
        parent: shown != "/",
        entries,
    };
    if view.json {
        (Bytes::from(render::json(&page)), true)
    } else {
        (Bytes::from(render::html(&page)), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use build::Entry;

    fn listing(n: usize) -> Listing {
        let entries: Vec<Entry> = (0..n)
            .map(|i| Entry {
                name: format!("f{i:06}").into_bytes().into(),
                is_dir: i < 2,
                size: ((i * 7919) % 1000) as u64,
                modified: Some(1_700_000_000 + ((i * 104_729) % 5000) as u64),
            })
            .collect();
        let order = |key: fn(&Entry) -> u64| {
            let mut idx: Vec<u32> = (0..n as u32).collect();
            idx.sort_by_key(|&i| (!entries[i as usize].is_dir, key(&entries[i as usize])));
            idx
        };
        Listing {
            by_size: order(|e| e.size),
            by_date: order(|e| e.modified.unwrap_or(0)),
            entries,
            dir_modified: None,
            built: Instant::now(),
            cost: Duration::ZERO,
        }
    }

    fn names(json: &Bytes) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_slice(json).unwrap();
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn pages_and_orders() {
        let l = listing(2500);
        struct Case {
            query: &'static [u8],
            count: usize,
            first: &'static str,
            prev: Option<&'static str>,
            next: Option<&'static str>,
        }
        let cases = [
            Case {
                query: b"format=json",
                count: 1000,
                first: "f000000",
                prev: None,
                next: Some("?page=2&format=json"),
            },
            Case {
                query: b"format=json&page=2",
                count: 1000,
                first: "f001000",
                prev: Some("?format=json"),
                next: Some("?page=3&format=json"),
            },
            Case {
                query: b"format=json&page=3",
                count: 500,
                first: "f002000",
                prev: Some("?page=2&format=json"),
                next: None,
            },
            // Past the end: the last page.
            Case {
                query: b"format=json&page=9",
                count: 500,
                first: "f002000",
                prev: Some("?page=2&format=json"),
                next: None,
            },
            // Descending by name: directories last (the reverse of first), highest name first.
            Case {
                query: b"format=json&order=desc",
                count: 1000,
                first: "f002499",
                prev: None,
                next: Some("?order=desc&page=2&format=json"),
            },
        ];
        for c in cases {
            let (body, json) = render_page(&l, "/big/", query::parse(c.query));
            assert!(json);
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let n = names(&body);
            let q = String::from_utf8_lossy(c.query);
            assert_eq!((n.len(), n[0].as_str()), (c.count, c.first), "{q}");
            assert_eq!(v["prev"].as_str(), c.prev, "{q}");
            assert_eq!(v["next"].as_str(), c.next, "{q}");
            assert_eq!((v["total"].as_u64(), v["pages"].as_u64()), (Some(2500), Some(3)), "{q}");
        }
        // Every order is a permutation with directories first, sorted by its key, stable
        // across pages.
        for (sort, key) in [("size", 0), ("date", 1)] {
            let mut all = Vec::new();
            for page in 1..=3 {
                let q = format!("format=json&sort={sort}&page={page}");
                let (body, _) = render_page(&l, "/big/", query::parse(q.as_bytes()));
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
                for e in v["entries"].as_array().unwrap() {
                    let k = if key == 0 {
                        e["size"].as_u64()
                    } else {
                        e["modified"].as_str().map(|_| 0)
                    };
                    all.push((
                        e["dir"].as_bool().unwrap(),
                        k,
                        e["name"].as_str().unwrap().to_owned(),
                    ));
                }
            }
            assert_eq!(all.len(), 2500);
            assert!(all[0].0 && all[1].0 && !all[2].0, "{sort}: directories first");
            if key == 0 {
                assert!(
                    all[2..].windows(2).all(|w| (w[0].1, &w[0].2) <= (w[1].1, &w[1].2)),
                    "{sort}"
                );
            }
            let mut names: Vec<_> = all.iter().map(|a| a.2.clone()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), 2500, "{sort}: each entry once");
        }
    }

    #[test]
    fn html_page_has_links_and_sort_headers() {
        let l = listing(1500);
        let (body, json) = render_page(&l, "/big/", query::parse(b"sort=size&page=2"));
        assert!(!json);
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(html.contains("<title>Index of /big/</title>"), "{html}");
        assert!(html.contains("1500 entries, 1001\u{2013}1500 shown (page 2 of 2)"), "{html}");
        assert!(html.contains("<a rel=\"prev\" href=\"?sort=size\">"), "{html}");
        assert!(!html.contains("rel=\"next\""), "{html}");
        assert!(html.contains("<a href=\"?sort=size&amp;order=desc\">Size \u{2191}</a>"), "{html}");
        assert!(html.contains("prefers-color-scheme:dark"), "{html}");
        assert_eq!(html.matches("<tr><td><a href=\"./f").count(), 500, "{html}");
    }
}
