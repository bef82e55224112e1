//! One page of a listing as HTML (light and dark, sortable, paginated) or as JSON.

use std::fmt::Write as _;

use super::build::Entry;
use super::query::{Sort, View};
use super::text::{date, display_name, escape_html, human_size, json_string, percent_encode};

/// What a page shows.
pub(crate) struct Page<'a> {
    /// The directory's path for display (`/docs/`).
    pub(crate) shown: &'a str,
    pub(crate) view: View,
    pub(crate) pages: usize,
    pub(crate) total: usize,
    pub(crate) per_page: usize,
    /// Whether the directory has a parent to link to.
    pub(crate) parent: bool,
    pub(crate) entries: Vec<&'a Entry>,
}

/// A small inline style: system fonts, a readable measure, `color-scheme` and a dark palette
/// under `prefers-color-scheme: dark`. No script, no external resource.
const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;\
--link:#0969da;--row:#f6f8fa}\
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;\
--line:#3d444d;--link:#4493f8;--row:#151b23}}\
body{font:15px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:var(--fg);\
background:var(--bg);max-width:64rem;margin:0 auto;padding:1.5rem}\
h1{font-size:1.35rem;font-weight:600;margin:0 0 .25rem;overflow-wrap:anywhere}\
p,nav{color:var(--muted);font-size:.9rem;margin:.5rem 0 1rem}\
table{border-collapse:collapse;width:100%}\
th,td{padding:.4rem .6rem;border-bottom:1px solid var(--line);text-align:left}\
th{font-size:.85rem;font-weight:600}th a{color:var(--muted)}\
td:first-child{overflow-wrap:anywhere}\
.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\
.d{white-space:nowrap;color:var(--muted);font-variant-numeric:tabular-nums}\
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}\
tbody tr:hover{background:var(--row)}.dir a{font-weight:600}\
nav a{margin-right:1rem}";

pub(crate) fn html(p: &Page<'_>) -> String {
    let mut h = String::with_capacity(2048 + p.entries.len() * 160);
    let mut title = String::new();
    escape_html(p.shown, &mut title);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <title>Index of {title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>Index of {title}</h1>\n"
    );
    let first = (p.view.page - 1) * p.per_page;
    let _ = write!(h, "<p>{} {}", p.total, if p.total == 1 { "entry" } else { "entries" });
    if p.pages > 1 {
        let _ = write!(
            h,
            ", {}\u{2013}{} shown (page {} of {})",
            first + 1,
            first + p.entries.len(),
            p.view.page,
            p.pages
        );
    }
    let json = View { json: true, ..p.view }.query().replace('&', "&amp;");
    let _ = writeln!(h, " \u{b7} <a href=\"{json}\">JSON</a></p>");
    nav(p, &mut h);
    h.push_str("<table>\n<thead><tr>");
    for (sort, label, class) in [
        (Sort::Name, "Name", ""),
        (Sort::Size, "Size", " class=\"n\""),
        (Sort::Date, "Modified (UTC)", ""),
    ] {
        // The active column's link reverses the order; another column starts ascending
        // (sizes and dates descending: the largest and newest first is what people look for).
        let active = p.view.sort == sort;
        let desc = if active { !p.view.desc } else { sort != Sort::Name };
        let link = View { sort, desc, page: 1, json: false }.query();
        let arrow = match (active, p.view.desc) {
            (false, _) => "",
            (true, false) => " \u{2191}",
            (true, true) => " \u{2193}",
        };
        let _ = write!(
            h,
            "<th{class}><a href=\"{}\">{label}{arrow}</a></th>",
            link.replace('&', "&amp;")
        );
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    if p.parent {
        h.push_str("<tr class=\"dir\"><td><a href=\"../\">../</a></td><td class=\"n\"></td><td></td></tr>\n");
    }
    let mut shown = String::new();
    for e in &p.entries {
        let slash = if e.is_dir { "/" } else { "" };
        h.push_str(if e.is_dir { "<tr class=\"dir\"><td>" } else { "<tr><td>" });
        h.push_str("<a href=\"./");
        percent_encode(&e.name, &mut h);
        h.push_str(slash);
        h.push_str("\">");
        shown.clear();
        display_name(&e.name, &mut shown);
        escape_html(&shown, &mut h);
        h.push_str(slash);
        h.push_str("</a></td><td class=\"n\"");
        if e.is_dir {
            h.push_str(">\u{2014}");
        } else {
            let _ = write!(h, " title=\"{} bytes\">", e.size);
            human_size(e.size, &mut h);
        }
        h.push_str("</td><td class=\"d\">");
        if let Some(secs) = e.modified {
            h.push_str("<time datetime=\"");
            date(secs, true, &mut h);
            h.push_str("\">");
            date(secs, false, &mut h);
            h.push_str("</time>");
        }
        h.push_str("</td></tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    nav(p, &mut h);
    h.push_str("</body>\n</html>\n");
    h
}

/// Previous / next page links, when there is more than one page.
fn nav(p: &Page<'_>, h: &mut String) {
    if p.pages <= 1 {
        return;
    }
    h.push_str("<nav>");
    if p.view.page > 1 {
        let prev = View { page: p.view.page - 1, ..p.view }.query();
        let _ = write!(
            h,
            "<a rel=\"prev\" href=\"{}\">\u{2190} previous</a>",
            prev.replace('&', "&amp;")
        );
    }
    if p.view.page < p.pages {
        let next = View { page: p.view.page + 1, ..p.view }.query();
        let _ =
            write!(h, "<a rel=\"next\" href=\"{}\">next \u{2192}</a>", next.replace('&', "&amp;"));
    }
    h.push_str("</nav>\n");
}

/// The page as one JSON object: `path`, `sort`, `order`, `page`, `pages`, `per_page`,
/// `total`, `prev` and `next` (relative links or null), and `entries`, each with `name`
/// (percent-encoded when not UTF-8), `href` (relative, percent-encoded, `/` after a
/// directory), `dir`, `size` (null for a directory) and `modified` (RFC 3339 UTC or null).
pub(crate) fn json(p: &Page<'_>) -> String {
    let mut j = String::with_capacity(256 + p.entries.len() * 120);
    j.push_str("{\"path\":");
    json_string(p.shown, &mut j);
    let _ = write!(
        j,
        ",\"sort\":\"{}\",\"order\":\"{}\",\"page\":{},\"pages\":{},\"per_page\":{},\"total\":{}",
        p.view.sort.as_str(),
        if p.view.desc { "desc" } else { "asc" },
        p.view.page,
        p.pages,
        p.per_page,
        p.total
    );
    for (key, page) in [("prev", p.view.page - 1), ("next", p.view.page + 1)] {
        let _ = write!(j, ",\"{key}\":");
        if page >= 1 && page <= p.pages {
            json_string(&View { page, ..p.view }.query(), &mut j);
        } else {
            j.push_str("null");
        }
    }
    j.push_str(",\"entries\":[");
    let mut s = String::new();
    for (i, e) in p.entries.iter().enumerate() {
        if i > 0 {
            j.push(',');
        }
        s.clear();
        display_name(&e.name, &mut s);
        j.push_str("{\"name\":");
        json_string(&s, &mut j);
        s.clear();
        percent_encode(&e.name, &mut s);
        if e.is_dir {
            s.push('/');
        }
        j.push_str(",\"href\":");
        json_string(&s, &mut j);
        let _ = write!(j, ",\"dir\":{}", e.is_dir);
        if e.is_dir {
            j.push_str(",\"size\":null");
        } else {
            let _ = write!(j, ",\"size\":{}", e.size);
        }
        j.push_str(",\"modified\":");
        match e.modified {
            Some(secs) => {
                j.push('"');
                date(secs, true, &mut j);
                j.push('"');
            }
            None => j.push_str("null"),
        }
        j.push('}');
    }
    j.push_str("]}\n");
    j
}
