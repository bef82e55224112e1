//! The `peregrine` command line.

fn main() {
    eprintln!("usage: peregrine serve [DIR] [--addr HOST:PORT]");
    std::process::exit(2);
}
