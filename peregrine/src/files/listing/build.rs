//! Reading a directory into a sorted listing (the slow part: one `readdir` pass and one
//! `stat` per entry), done once per directory version and kept by the cache.

use std::io;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name's bytes (need not be UTF-8 on Unix).
    pub(crate) name: Box<[u8]>,
    pub(crate) is_dir: bool,
    pub(crate) size: u64,
    /// Modification time, seconds since the epoch.
    pub(crate) modified: Option<u64>,
}

/// A directory's entries with their three orders.
#[derive(Debug)]
pub(crate) struct Listing {
    /// Directories first, then files; each by name, bytewise.
    pub(crate) entries: Vec<Entry>,
    /// Indexes into `entries`: directories first, then by size (ties by name).
    pub(crate) by_size: Vec<u32>,
    /// Indexes into `entries`: directories first, then by modification time (ties by name).
    pub(crate) by_date: Vec<u32>,
    /// The directory's modification time when it was read: any entry added, removed or
    /// renamed changes it.
    pub(crate) dir_modified: Option<SystemTime>,
    pub(crate) built: Instant,
    /// How long reading took: the cache keeps a listing longer the dearer it was.
    pub(crate) cost: std::time::Duration,
}

/// Reads `dir` (a real path beneath `root`).
///
/// What is listed: regular files and directories whose names could be requested back (no
/// backslash; with `hide_dotfiles`, no leading dot). A symlink is listed only when it
/// resolves beneath `root` (and, with `hide_dotfiles`, through no dot-component), so the
/// listing never reveals the size of a file outside it.
pub(crate) fn read(
    dir: &Path,
    root: &Path,
    hide_dotfiles: bool,
    dir_modified: Option<SystemTime>,
) -> io::Result<Listing> {
    let start = Instant::now();
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        if name.contains(&b'\\') || (hide_dotfiles && name.first() == Some(&b'.')) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let meta = if kind.is_symlink() {
            match std::fs::canonicalize(entry.path()) {
                Ok(real) if beneath(&real, root, hide_dotfiles) => std::fs::metadata(&real),
                _ => continue,
            }
        } else {
            entry.metadata()
        };
        let Ok(meta) = meta else { continue };
        if meta.is_dir() || meta.is_file() {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs());
            entries.push(Entry {
                name: name.into(),
                is_dir: meta.is_dir(),
                size: if meta.is_dir() { 0 } else { meta.len() },
                modified,
            });
        }
    }
    entries.sort_unstable_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    // `entries` is in name order, so a stable sort by another key keeps names as tie-break.
    let order = |key: fn(&Entry) -> u64| {
        let mut idx: Vec<u32> = (0..entries.len() as u32).collect();
        idx.sort_by_key(|&i| {
            let e = &entries[i as usize];
            (!e.is_dir, key(e))
        });
        idx
    };
    let by_size = order(|e| e.size);
    let by_date = order(|e| e.modified.unwrap_or(0));
    Ok(Listing { entries, by_size, by_date, dir_modified, built: start, cost: start.elapsed() })
}

fn beneath(real: &Path, root: &Path, hide_dotfiles: bool) -> bool {
    match real.strip_prefix(root) {
        Ok(below) => {
            !hide_dotfiles
                || !below
                    .components()
                    .any(|c| c.as_os_str().as_encoded_bytes().first() == Some(&b'.'))
        }
        Err(_) => false,
    }
}
