//! What the proxy's end-to-end tests share: temporary directories, the `peregrine` processes
//! they run (the URL each printed, its stderr lines as they come) and a raw HTTP/1.1 client.
#![allow(dead_code)] // each test crate uses its part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_peregrine");

/// A temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(files: &[(&str, &str)]) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "peregrine-cli-proxy-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `peregrine` process: the address it printed, and its stderr lines as they come.
pub struct Running {
    pub child: Child,
    pub addr: SocketAddr,
    pub stderr: mpsc::Receiver<String>,
}

impl Running {
    /// Starts `peregrine ARGS` and reads the first line, which must start with `starts` and end
    /// with the URL.
    pub fn start(args: &[&str], starts: &str) -> Running {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start peregrine");
        let (tx, stderr) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line
            .split(' ')
            .find_map(|w| w.strip_prefix("http://"))
            .and_then(|a| a.trim_end().parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let err: Vec<String> = stderr.try_iter().collect();
            panic!("no URL in {line:?}; stderr: {err:?}");
        };
        assert!(line.starts_with(starts), "{line}");
        Running { child, addr, stderr }
    }

    /// A backend: `peregrine serve DIR`.
    pub fn serve(dir: &Path) -> Running {
        let dir = dir.to_str().unwrap();
        Running::start(
            &["serve", dir, "--addr", "127.0.0.1:0", "--quiet", "--workers", "1"],
            "Serving ",
        )
    }

    /// `peregrine proxy` with `extra` flags.
    pub fn proxy(extra: &[&str]) -> Running {
        let mut args = vec!["proxy", "--addr", "127.0.0.1:0", "--drain-grace", "0"];
        args.extend_from_slice(extra);
        Running::start(&args, "Proxying http://")
    }

    /// Waits for a stderr line containing `text`, and returns it.
    pub fn stderr_line(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        panic!("no stderr line with {text:?}; saw {seen:?}");
    }

    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args([name, &pid]).status().unwrap().success());
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(mut self) -> ExitStatus {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "no exit within 10 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tiny HTTP/1.1 client: one keep-alive connection, Content-Length framing (what peregrine
/// sends for files and its own answers).
pub struct Client {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Client { stream, buf: Vec::new() }
    }

    /// `GET target` on this connection: the status, the head and the body.
    pub fn get(&mut self, target: &str) -> (u16, String, String) {
        self.send(format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
    }

    /// Writes `request` as it is and reads one response: the status, the head and the body
    /// (Content-Length framed, or up to the end of the connection without one).
    pub fn send(&mut self, request: &[u8]) -> (u16, String, String) {
        self.stream.write_all(request).unwrap();
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            assert!(self.fill() > 0, "connection closed before a response head");
        };
        let head = String::from_utf8(self.buf[..end].to_vec()).unwrap();
        self.buf.drain(..end + 4);
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let len: Option<usize> = head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length").then(|| v.trim().parse().unwrap())
        });
        let len = match len {
            Some(len) => len,
            None => {
                while self.fill() > 0 {}
                self.buf.len()
            }
        };
        while self.buf.len() < len {
            assert!(self.fill() > 0, "connection closed inside a body");
        }
        let body =
            String::from_utf8_lossy(&self.buf.drain(..len).collect::<Vec<u8>>()).into_owned();
        (status, head, body)
    }

    pub fn fill(&mut self) -> usize {
        let mut chunk = [0; 16 * 1024];
        let n = loop {
            match self.stream.read(&mut chunk) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break 0,
                other => break other.expect("read"),
            }
        };
        self.buf.extend_from_slice(&chunk[..n]);
        n
    }
}

/// One request on a new connection: the status and the body.
pub fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let (status, _, body) = Client::connect(addr).get(target);
    (status, body)
}

/// A port free a moment ago on 127.0.0.1, for a backend that cannot be told to pick one.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A backend process that is not peregrine (Python's http.server, nginx), killed when dropped.
pub struct Foreign {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Foreign {
    /// Runs `program args`, then waits until `addr` accepts a connection.
    pub fn start(program: &str, args: &[&str], addr: SocketAddr) -> Foreign {
        let child = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let mut backend = Foreign { child, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            if let Some(status) = backend.child.try_wait().unwrap() {
                panic!("{program} exited: {status}");
            }
            assert!(Instant::now() < deadline, "{program} does not listen on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        backend
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `program` can be run here; when not, the test says so and is skipped.
pub fn installed(program: &str, version_flag: &str) -> bool {
    let ok = Command::new(program)
        .arg(version_flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: `{program}` is not installed");
    }
    ok
}
