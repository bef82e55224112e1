//! The site flags the library's `ServeDir` options take: fields, CORS, 404 page, auth. Each
//! bad value is a one-line reason (exit 2); the `--auth` value is never echoed.

use http::{HeaderName, HeaderValue};
use peregrine::files::{BasicAuth, Cors, ServeDir};

use super::args::ServeArgs;
use crate::io_error::describe;

/// Applies the site flags to `files`, or says which flag is wrong and why.
pub(super) fn configure(mut files: ServeDir, args: &ServeArgs) -> Result<ServeDir, String> {
    for h in &args.header {
        let (name, value) = header(h).map_err(|why| format!("--header '{h}': {why}"))?;
        files = files.header(name, value);
    }
    if let Some(list) = &args.cors {
        files = files.cors(cors(list)?);
    }
    if let Some(page) = &args.not_found {
        files = files
            .not_found_page(page)
            .map_err(|e| format!("--404 {}: {}", page.display(), describe(&e)))?;
    }
    if let Some(auth) = &args.auth {
        files = files.basic_auth(basic_auth(auth)?);
    }
    Ok(files)
}

/// `Name: value` (RFC 9110 §5.1 token, §5.5 field value without CR, LF or NUL).
fn header(h: &str) -> Result<(HeaderName, HeaderValue), &'static str> {
    let (name, value) = h.split_once(':').ok_or("expected 'Name: value'")?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| "the name must be a token (letters, digits, !#$%&'*+-.^_`|~)")?;
    // Fields the server frames the message with are its own.
    if [
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "date",
    ]
    .contains(&name.as_str())
    {
        return Err("the server sets this field itself");
    }
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| "the value must be visible ASCII, spaces or tabs (no line breaks)")?;
    Ok((name, value))
}

fn cors(list: &str) -> Result<Cors, String> {
    if list == "*" {
        return Ok(Cors::any());
    }
    let origins: Vec<&str> = list.split(',').map(str::trim).filter(|o| !o.is_empty()).collect();
    for o in &origins {
        let rest = o.strip_prefix("https://").or_else(|| o.strip_prefix("http://"));
        if rest.is_none_or(|r| r.is_empty() || r.contains(['/', '?', '#', ' '])) {
            return Err(format!(
                "--cors: '{o}' is not an origin like https://app.example (and DIR goes before \
                 --cors)"
            ));
        }
    }
    if origins.is_empty() {
        return Err("--cors: no origin in the list".to_owned());
    }
    Ok(Cors::origins(origins))
}

/// `USER:PASSWORD`, the password in clear or a bcrypt hash. Errors never quote the value.
fn basic_auth(v: &str) -> Result<BasicAuth, String> {
    let (user, password) = v.split_once(':').ok_or("--auth: expected USER:PASSWORD")?;
    if user.is_empty() || password.is_empty() {
        return Err("--auth: expected USER:PASSWORD, both non-empty".to_owned());
    }
    if password.starts_with("$2") {
        return BasicAuth::bcrypt(user, password).map_err(|e| format!("--auth: {e}"));
    }
    Ok(BasicAuth::new(user, password))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_flags() {
        struct Case {
            input: &'static str,
            expect: Result<(&'static str, &'static str), ()>,
        }
        let cases = [
            Case { input: "X-Frame-Options: DENY", expect: Ok(("x-frame-options", "DENY")) },
            Case { input: "x-a:b", expect: Ok(("x-a", "b")) },
            Case { input: "X-Empty:", expect: Ok(("x-empty", "")) },
            Case { input: "X-Colon: a:b", expect: Ok(("x-colon", "a:b")) },
            Case { input: "no colon", expect: Err(()) },
            Case { input: "bad name: x", expect: Err(()) },
            Case { input: ": x", expect: Err(()) },
            Case { input: "X-A: a\nb", expect: Err(()) },
            Case { input: "Content-Length: 5", expect: Err(()) },
            Case { input: "transfer-encoding: chunked", expect: Err(()) },
        ];
        for c in cases {
            let got = header(c.input);
            let got = got.as_ref().map(|(n, v)| (n.as_str(), v.to_str().unwrap())).map_err(|_| ());
            assert_eq!(got, c.expect, "{}", c.input);
        }
    }

    #[test]
    fn cors_and_auth_flags() {
        assert!(cors("*").is_ok());
        assert!(cors("https://a.example, http://b.example:8080").is_ok());
        for bad in ["./public", "a.example", "https://", "https://a/b", ","] {
            assert!(cors(bad).is_err(), "{bad}");
        }
        assert!(basic_auth("ann:pw:with:colons").is_ok());
        for bad in ["ann", ":pw", "ann:", "ann:$2b$10$nothash"] {
            let err = basic_auth(bad).unwrap_err();
            assert!(!err.contains(bad) || bad.len() < 4, "echoed: {err}");
        }
    }
}
