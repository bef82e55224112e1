//! The HTML directory listing.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use bytes::Bytes;

struct Entry {
    name: String,
    is_dir: bool,
    size: u64,
}

/// Renders the listing of `dir` (a real path beneath `root`) for the request path `shown`
/// (decoded, e.g. `/docs/`), as UTF-8 HTML.
///
/// What is listed: regular files and directories whose names are UTF-8 and could be requested
/// back (no backslash; with `hide_dotfiles`, no leading dot). A symlink is listed only when it
/// resolves beneath `root`, so the listing never reveals the size of a file outside it.
/// Directories come first, then files, each sorted by name (bytewise).
///
/// Names are HTML-escaped in text and percent-encoded in `href`s (every byte but the
/// unreserved set of RFC 3986 §2.3), so a name like `<script>` or `a:b` stays inert text and
/// a relative link. Blocking: reads the directory and stats its entries.
pub(crate) fn render(
    dir: &Path,
    root: &Path,
    shown: &str,
    hide_dotfiles: bool,
) -> io::Result<Bytes> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.contains('\\') || (hide_dotfiles && name.starts_with('.')) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let meta = if kind.is_symlink() {
            match std::fs::canonicalize(entry.path()) {
                Ok(real) if beneath(&real, root, hide_dotfiles) => std::fs::metadata(&real),
                _ => continue,
            }
        } else {
            entry.metadata()
        };
        let Ok(meta) = meta else { continue };
        if meta.is_dir() || meta.is_file() {
            entries.push(Entry { name, is_dir: meta.is_dir(), size: meta.len() });
        }
    }
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));

    let mut html = String::with_capacity(512 + entries.len() * 128);
    let mut title = String::new();
    escape_html(shown, &mut title);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Index of {title}</title>\n</head>\n<body>\n<h1>Index of {title}</h1>\n\
         <table>\n<tr><th>Name</th><th>Size</th></tr>\n"
    );
    if shown != "/" {
        html.push_str("<tr><td><a href=\"../\">../</a></td><td>-</td></tr>\n");
    }
    for e in &entries {
        html.push_str("<tr><td><a href=\"./");
        percent_encode(&e.name, &mut html);
        let slash = if e.is_dir { "/" } else { "" };
        html.push_str(slash);
        html.push_str("\">");
        escape_html(&e.name, &mut html);
        html.push_str(slash);
        html.push_str("</a></td><td>");
        if e.is_dir {
            html.push('-');
        } else {
            let _ = write!(html, "{}", e.size);
        }
        html.push_str("</td></tr>\n");
    }
    html.push_str("</table>\n</body>\n</html>\n");
    Ok(Bytes::from(html))
}

fn beneath(real: &Path, root: &Path, hide_dotfiles: bool) -> bool {
    match real.strip_prefix(root) {
        Ok(below) => {
            !hide_dotfiles
                || !below
                    .components()
                    .any(|c| c.as_os_str().as_encoded_bytes().first() == Some(&b'.'))
        }
        Err(_) => false,
    }
}

/// Escapes the five characters that matter in HTML text and attribute values.
pub(crate) fn escape_html(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// Percent-encodes every byte outside RFC 3986 §2.3 `unreserved`.
fn percent_encode(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_html_and_rfc3986_2_3() {
        struct Case {
            input: &'static str,
            html: &'static str,
            href: &'static str,
        }
        let cases = [
            Case { input: "a.txt", html: "a.txt", href: "a.txt" },
            Case {
                input: "<script>&\"'.txt",
                html: "&lt;script&gt;&amp;&quot;&#39;.txt",
                href: "%3Cscript%3E%26%22%27.txt",
            },
            Case { input: "a b:c?#%", html: "a b:c?#%", href: "a%20b%3Ac%3F%23%25" },
            Case { input: "\u{e9}", html: "\u{e9}", href: "%C3%A9" },
        ];
        for c in cases {
            let (mut html, mut href) = (String::new(), String::new());
            escape_html(c.input, &mut html);
            percent_encode(c.input, &mut href);
            assert_eq!((html.as_str(), href.as_str()), (c.html, c.href), "{}", c.input);
        }
    }
}
