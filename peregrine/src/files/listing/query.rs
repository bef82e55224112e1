//! What a listing request asks for in its query: order, page, format.

use std::fmt::Write as _;

/// The key a listing is sorted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sort {
    Name,
    Size,
    Date,
}

impl Sort {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Sort::Name => "name",
            Sort::Size => "size",
            Sort::Date => "date",
        }
    }
}

/// One page of a listing, in one order and format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) sort: Sort,
    pub(crate) desc: bool,
    /// 1-based.
    pub(crate) page: usize,
    pub(crate) json: bool,
}

impl Default for View {
    fn default() -> View {
        View { sort: Sort::Name, desc: false, page: 1, json: false }
    }
}

/// Reads `sort=name|size|date`, `order=asc|desc`, `page=N` and `format=json|html` from a
/// query (`a=b&c=d`); anything else, or a value not understood, keeps the default.
pub(crate) fn parse(query: &[u8]) -> View {
    let mut v = View::default();
    for pair in query.split(|&b| b == b'&') {
        let mut kv = pair.splitn(2, |&b| b == b'=');
        let (k, val) = (kv.next().unwrap_or_default(), kv.next().unwrap_or_default());
        match (k, val) {
            (b"sort", b"name") => v.sort = Sort::Name,
            (b"sort", b"size") => v.sort = Sort::Size,
            (b"sort", b"date") => v.sort = Sort::Date,
            (b"order", b"asc") => v.desc = false,
            (b"order", b"desc") => v.desc = true,
            (b"format", b"json") => v.json = true,
            (b"format", b"html") => v.json = false,
            (b"page", n) if !n.is_empty() && n.len() <= 9 && n.iter().all(u8::is_ascii_digit) => {
                let n = n.iter().fold(0usize, |a, &d| a * 10 + usize::from(d - b'0'));
                v.page = n.max(1);
            }
            _ => {}
        }
    }
    v
}

impl View {
    /// The query naming this view (`?sort=size&order=desc&page=2`), defaults left out so
    /// links stay short.
    pub(crate) fn query(&self) -> String {
        let mut q = String::new();
        let mut sep = '?';
        let mut put = |q: &mut String, s: std::fmt::Arguments<'_>| {
            q.push(sep);
            let _ = q.write_fmt(s);
            sep = '&';
        };
        if self.sort != Sort::Name {
            put(&mut q, format_args!("sort={}", self.sort.as_str()));
        }
        if self.desc {
            put(&mut q, format_args!("order=desc"));
        }
        if self.page != 1 {
            put(&mut q, format_args!("page={}", self.page));
        }
        if self.json {
            put(&mut q, format_args!("format=json"));
        }
        if q.is_empty() {
            q.push_str("./");
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_round_trip() {
        struct Case {
            input: &'static [u8],
            expect: View,
            link: &'static str,
        }
        let d = View::default();
        let cases = [
            Case { input: b"", expect: d, link: "./" },
            Case {
                input: b"sort=size&order=desc",
                expect: View { sort: Sort::Size, desc: true, ..d },
                link: "?sort=size&order=desc",
            },
            Case {
                input: b"page=3&format=json",
                expect: View { page: 3, json: true, ..d },
                link: "?page=3&format=json",
            },
            Case {
                input: b"sort=date",
                expect: View { sort: Sort::Date, ..d },
                link: "?sort=date",
            },
            Case { input: b"page=0", expect: d, link: "./" },
            Case { input: b"page=-1&sort=evil&order=up&x", expect: d, link: "./" },
            Case { input: b"page=99999999999999999999", expect: d, link: "./" },
            Case { input: b"format=json&format=html", expect: d, link: "./" },
        ];
        for c in cases {
            let v = parse(c.input);
            assert_eq!(v, c.expect, "{:?}", String::from_utf8_lossy(c.input));
            assert_eq!(v.query(), c.link, "{:?}", String::from_utf8_lossy(c.input));
        }
    }
}
