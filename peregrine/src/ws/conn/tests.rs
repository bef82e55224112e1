//! The connection's rules as table rows: each row's input is fed whole, a byte at a time and
//! in random pieces, and every split must give the same transcript (events, frames written,
//! state). Then round trips between a client and a server, and the timers.

mod harness;
mod hostile;
mod round_trip;
mod rules;
mod shared;
mod timers;
