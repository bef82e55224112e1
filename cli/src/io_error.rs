//! I/O errors as the command line says them: in words, without Rust's "(os error N)" suffix.

use std::io;

/// An error in words, without the "(os error N)" suffix.
pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::NotADirectory => "not a directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        io::ErrorKind::AddrInUse => "address already in use".to_owned(),
        io::ErrorKind::AddrNotAvailable => "address not available on this machine".to_owned(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_owned(),
                None => text,
            }
        }
    }
}
