//! Conversations with the state machine: a hand-driven peer builds frames with a small
//! helper, the connection's events and output frames are checked.
mod budgets;
mod client;
mod flow;
mod server;
mod states;
pub(crate) mod wire;
