//! The connection's rules as table rows: each row's input is fed whole, a byte at a time, and
//! in random pieces, and every split must give the same transcript (events and output).

mod client;
mod harness;
mod server;
mod timers;
