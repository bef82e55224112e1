//! The connection's rules as table rows: each row's input is fed whole, a byte at a time, and
//! in random pieces, and every split must give the same transcript (events and output).
//!
//! Every rule the server's HTTP/1.1 loop kept before the `Conn` existed (the old
//! `server/h1/mod.rs`, `body.rs`, `write.rs` and `fixed_loop.rs`) and where it is tested now,
//! here and over sockets in `tests/`:
//!
//! | rule | `Conn` rows | over sockets |
//! |---|---|---|
//! | responses to pipelined requests in order; one request at a time | `server::keep_alive_pipelining_and_close` | `server_basic`, `server_fixed` (pipelined batches in random pieces) |
//! | keep-alive by version and `Connection` (RFC 9112 §9.3), close after `close` | same | `server_basic` |
//! | the HTTP/2 preface on an h2c port; bytes that cannot begin a request line closed unanswered | `server::the_http2_preface_and_bytes_that_are_not_http1` | `server_errors`, `server_h2`, h2spec §3.5 |
//! | a bad head refused with its status and reason, then closed; earlier answers kept | `server::refusals_of_bad_heads` | `server_errors`, `server_access_log` |
//! | a declared body over `max_body_bytes`: 413 before reading | `server::bodies_read_settled_and_drained` | `server_body`, `server_limits` |
//! | bodies by length and chunked, trailers, limits | `server::bodies_read_settled_and_drained`, `server::a_chunked_body_past_max_body_bytes_fails` | `server_body` |
//! | `100 Continue` when the body is first asked for and none came; none for HTTP/1.0 | `server::expect_100_continue` | `server_body` |
//! | an unread body settled (buffered part checked), drained within `max_drain_bytes`, else close | `server::a_malformed_unread_body_gets_its_status`, `server::an_unread_body_is_drained_after_the_response` | `server_body` |
//! | `101` hands the connection over with the bytes after the head | `server::upgrade_hands_off_after_the_101` | `server_h2` (h2c upgrade) |
//! | a drain's `Connection: close` on every response | `server::a_shutdown_closes_after_the_next_response` | `server_drain`, `server_shutdown` |
//! | more fields than the stack holds | `server::more_fields_than_storage_asks_for_more` | `server_limits` |
//! | the end of input between requests, inside a head, inside a body | `server::keep_alive_pipelining_and_close`, `server::bodies_read_settled_and_drained` | `server_fixed` (half-closed client) |
//! | the first head timed from the connection's start, later heads from their first byte | `timers::the_first_head_is_timed_from_the_start_later_ones_from_their_first_byte` | `server_limits`, `server_fixed` |
//! | the keep-alive timeout | `timers::an_idle_connection_times_out` | `server_fixed`, `server_limits` |
//! | the minimum body rate (408) | `timers::a_body_slower_than_the_minimum_rate_fails` | `server_limits` |
//! | a drain held to the rate | `timers::a_drain_is_held_to_the_rate_too` | — |
//! | the write timeout | the transport's (`net::write`) | `server_limits::a_client_that_stops_reading_is_closed_by_the_write_timeout` |
//! | eviction at `max_connections`, the lingering close | the driver's (`server::h1`) | `server_limits`, `server_fixed`, `server_basic` (lingering) |
//!
//! The client's rules (the old `client/conn/h1.rs`) are `client::*` and `timers::a_client_*`.

mod client;
mod harness;
mod server;
mod timers;
