//! Static files mounted in an application: `/api/hello` is answered by code, `/static/...` from
//! a directory, anything else is 404.
//!
//! ```sh
//! cargo run --release -p peregrine --example static_files -- ./public
//! curl http://127.0.0.1:8080/static/index.html
//! ```

use http::StatusCode;
use peregrine::files::ServeDir;
use peregrine::{Request, Response, Server};

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let files = ServeDir::new(&dir)?.cache_control(Some("public, max-age=60".to_owned()));
    println!("Serving {dir} under http://127.0.0.1:8080/static/");
    Server::bind("127.0.0.1:8080").run(move |req: Request| {
        let res = match req.path() {
            "/api/hello" => Response::new("Hello, World!"),
            // The rest of the path, still percent-encoded, is resolved beneath the root.
            path => match path.strip_prefix("/static/") {
                Some(rest) => files.serve_path(&req, rest.as_bytes()),
                None => Response::with_status(StatusCode::NOT_FOUND, "not found"),
            },
        };
        std::future::ready(res)
    })
}
