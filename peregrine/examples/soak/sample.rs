//! Samples of the servers' processes from /proc: resident memory, open file descriptors,
//! threads and CPU time.

use serde_json::{Value, json};

#[derive(Clone, Copy, Default)]
pub struct Proc {
    pub rss_kib: u64,
    /// The anonymous (heap, stacks) and file-backed (the binary's pages) parts of `rss_kib`:
    /// a rise in the first is the process's own memory, in the second code paths first run.
    pub anon_kib: u64,
    pub file_kib: u64,
    pub fds: u64,
    pub threads: u64,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
}

impl Proc {
    pub fn json(&self) -> Value {
        json!({
            "rss_kib": self.rss_kib,
            "rss_anon_kib": self.anon_kib,
            "rss_file_kib": self.file_kib,
            "fds": self.fds,
            "threads": self.threads,
        })
    }
}

/// The process's figures, or `None` once it has exited.
pub fn read(pid: u32) -> Option<Proc> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th
    // of the whole line (proc(5)).
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Proc {
        rss_kib: field("VmRSS:"),
        anon_kib: field("RssAnon:"),
        file_kib: field("RssFile:"),
        fds,
        threads: field("Threads:"),
        cpu_ticks: ticks,
    })
}

/// Clock ticks a second (sysconf(_SC_CLK_TCK)); 100 on every Linux this runs on.
pub const TICKS: f64 = 100.0;

pub fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}
