//! Which end of a connection we are: one word for both wire layers' state machines
//! (`http1::conn::Conn`, `http2::Conn`), chosen at run time rather than by a type parameter.

/// Which end of the connection we are: chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// We send requests (HTTP/2: the connection preface, odd-numbered streams).
    Client,
    /// We answer requests (HTTP/2: the streams the client opens).
    Server,
}
