//! The client's threading decision (`peregrine::client` module docs, "Threads"), pinned at
//! compile time: the futures a caller awaits inside a `Send` task are `Send`. (The types
//! themselves, `Client` and `Error` `Send + Sync`, `Connection` `Send`, are asserted beside
//! the code in `client/mod.rs`.) If one of these stops being `Send`, this file stops
//! compiling.

use peregrine::client::conn::{Config, Connection};
use peregrine::client::{Client, Error};
use peregrine::{Method, Response};

fn send<T: Send>(_: &T) {}
fn send_sync<T: Send + Sync>() {}

/// The futures of the pooled client and of the one-connection API, as a handler running on a
/// work-stealing runtime would hold them across `.await`.
#[allow(dead_code)] // only compiled: the futures are never polled
async fn uses(client: &Client, conn: &mut Connection) {
    let get = client.get("http://127.0.0.1:1/");
    send(&get);
    let request = http::Request::get("http://127.0.0.1:1/").body(()).unwrap();
    let sent = client.send(request);
    send(&sent);
    let config = Config::default();
    let connect = Connection::connect("http://127.0.0.1:1", &config);
    send(&connect);
    let _ = conn.send_request(Method::Get, "/", &[], &[]);
    let event = conn.next_event();
    send(&event);
}

#[test]
fn client_types_and_futures_are_send() {
    send_sync::<Client>();
    send_sync::<Error>();
    send_sync::<Response>();
    fn connection_is_send<T: Send>() {}
    connection_is_send::<Connection>();
    // A spawned task holding the client's futures: compiles only if they are `Send`.
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let client = Client::builder().build();
    let handle = rt.spawn(async move {
        // The port is closed: the request fails fast, after the future crossed threads.
        client.get("http://127.0.0.1:1/").await.is_err()
    });
    assert!(rt.block_on(handle).unwrap());
}
