//! Listening sockets for restarts without downtime: a socket made elsewhere (systemd socket
//! activation) shared by the workers, and `SO_REUSEPORT` so a new instance starts beside the
//! old one on the same port.

mod support;

use peregrine::{Request, Server};
use support::{RawClient, get, test_config};

/// A handler answering `name`.
fn named(name: &'static str) -> impl Fn(Request) -> std::future::Ready<&'static str> + Clone {
    move |_req: Request| std::future::ready(name)
}

#[test]
fn an_inherited_listener_is_shared_by_the_workers() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::from_listener(listener)
        .workers(3)
        .config(test_config())
        .spawn(|_req: Request| async { "inherited" })
        .unwrap();
    assert_eq!(server.local_addr(), addr);
    for _ in 0..12 {
        let mut c = RawClient::connect(addr);
        c.send(&get("/"));
        assert_eq!(c.response().body, b"inherited");
    }
    server.shutdown();
    server.join().unwrap();
    assert!(std::net::TcpStream::connect(addr).is_err(), "the socket outlived the workers");
}

#[test]
fn a_new_instance_starts_beside_the_old_one_with_reuse_port() {
    let old =
        Server::bind("127.0.0.1:0").workers(1).config(test_config()).spawn(named("old")).unwrap();
    let addr = old.local_addr();
    // Without the option the port in use is refused.
    let refused = Server::bind(addr).workers(1).spawn(|_req: Request| async { "x" });
    assert_eq!(refused.err().map(|e| e.kind()), Some(std::io::ErrorKind::AddrInUse));
    let new = Server::bind(addr)
        .workers(2)
        .reuse_port(true)
        .config(test_config())
        .spawn(named("new"))
        .unwrap();
    assert_eq!(new.local_addr(), addr);
    // The kernel spreads connections over both (by a hash of the 4-tuple).
    let mut seen = std::collections::HashSet::new();
    for _ in 0..64 {
        let mut c = RawClient::connect(addr);
        c.send(&get("/"));
        seen.insert(c.response().body);
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    // The old one drains and exits; the new one serves every connection.
    old.shutdown();
    old.join().unwrap();
    for _ in 0..16 {
        let mut c = RawClient::connect(addr);
        c.send(&get("/"));
        assert_eq!(c.response().body, b"new");
    }
    new.shutdown();
    new.join().unwrap();
}
