//! Choosing an upstream for a request: round-robin, least requests by the power of two random
//! choices, or consistent hashing of a request key. Sans-I/O: the caller says which upstreams
//! are usable and how busy each is.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a request's upstream is chosen among the usable ones.
///
/// # Examples
/// ```
/// use peregrine::proxy::{Balance, HashKey};
/// let sticky = Balance::Hash(HashKey::Cookie("session".into()));
/// assert_ne!(sticky, Balance::RoundRobin);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Balance {
    /// Each upstream in turn (nginx's and HAProxy's default).
    #[default]
    RoundRobin,
    /// The less busy of two upstreams drawn at random (the power of two choices: Mitzenmacher,
    /// 2001): nearly the spread of "least requests" over all, without its herd on the one
    /// least loaded upstream.
    LeastRequests,
    /// The upstream a key hashes to on a ring of virtual nodes (consistent hashing, Karger et
    /// al. 1997; 160 points per upstream as ketama): a key keeps its upstream, and an upstream
    /// taken out moves only its own keys. A request without the key goes round-robin.
    Hash(HashKey),
}

/// What a request is hashed by for [`Balance::Hash`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HashKey {
    /// The value of this header field (its first line).
    Header(String),
    /// The value of this cookie.
    Cookie(String),
    /// The client's IP address (the PROXY protocol's, where one was trusted).
    ClientAddr,
}

/// Virtual nodes per upstream on the ring.
const POINTS: usize = 160;

/// FNV-1a over `bytes`, finished with a 64-bit mixer (MurmurHash3's `fmix64`) so close keys
/// land far apart on the ring. Deterministic: the same key maps to the same upstream in every
/// process and every run.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A consistent-hash ring: sorted points, each naming an upstream.
#[derive(Debug)]
pub(crate) struct Ring {
    points: Vec<(u64, usize)>,
}

impl Ring {
    /// The ring of upstreams named `names` (their URLs: the same set of names gives the same
    /// ring in every process).
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Ring {
        let mut points = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            for p in 0..POINTS {
                let mut key = Vec::with_capacity(name.len() + 6);
                key.extend_from_slice(name.as_bytes());
                key.push(b'#');
                key.extend_from_slice(p.to_string().as_bytes());
                points.push((hash(&key), i));
            }
        }
        points.sort_unstable();
        Ring { points }
    }

    /// The first usable upstream at or after `key`'s point, going round the ring.
    pub(crate) fn pick(&self, key: u64, usable: impl Fn(usize) -> bool) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let start = self.points.partition_point(|&(p, _)| p < key);
        let n = self.points.len();
        (0..n).map(|k| self.points[(start + k) % n].1).find(|&i| usable(i))
    }
}

/// A small, fast pseudo-random sequence (xorshift64*) for the two random choices: each worker
/// has its own, seeded once.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        // Lemire's multiply-shift: no division, negligible bias for small `n`.
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// Round-robin: the next usable upstream after the counter.
pub(crate) fn round_robin(
    counter: &AtomicUsize,
    n: usize,
    usable: impl Fn(usize) -> bool,
) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let start = counter.fetch_add(1, Ordering::Relaxed);
    (0..n).map(|k| (start + k) % n).find(|&i| usable(i))
}

/// The power of two choices: two distinct usable upstreams at random, the one with fewer
/// requests in flight (the first drawn on a tie).
pub(crate) fn least_requests(
    rng: &mut Rng,
    n: usize,
    usable: impl Fn(usize) -> bool,
    load: impl Fn(usize) -> usize,
) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let a = rng.below(n);
    let b = (a + 1 + rng.below(n.max(2) - 1)) % n;
    match (usable(a), usable(b) && b != a) {
        (true, true) => Some(if load(b) < load(a) { b } else { a }),
        (true, false) => Some(a),
        (false, true) => Some(b),
        // Both out: the least loaded usable one, in order.
        (false, false) => (0..n).filter(|&i| usable(i)).min_by_key(|&i| load(i)),
    }
}

/// The key of a request for [`HashKey`], hashed; `None` when the request has none.
pub(crate) fn request_key<'a>(
    key: &HashKey,
    header: impl Fn(&str) -> Option<&'a [u8]>,
    mut cookies: impl Iterator<Item = &'a [u8]>,
    client: Option<IpAddr>,
) -> Option<u64> {
    match key {
        HashKey::Header(name) => header(name).map(hash),
        HashKey::Cookie(name) => cookies.find_map(|line| cookie(line, name)).map(hash),
        HashKey::ClientAddr => client.map(|ip| match ip {
            IpAddr::V4(v4) => hash(&v4.octets()),
            IpAddr::V6(v6) => hash(&v6.octets()),
        }),
    }
}

/// The value of cookie `name` in a `Cookie` line (RFC 6265 §4.2.1: `cookie-pair *( ";" SP
/// cookie-pair )`; surrounding whitespace tolerated).
pub(crate) fn cookie<'a>(line: &'a [u8], name: &str) -> Option<&'a [u8]> {
    line.split(|&b| b == b';').find_map(|pair| {
        let pair = crate::http1::field_syntax::trim_ows(pair);
        let eq = pair.iter().position(|&b| b == b'=')?;
        (&pair[..eq] == name.as_bytes()).then(|| &pair[eq + 1..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_skips_the_unusable() {
        let counter = AtomicUsize::new(0);
        let usable = |i: usize| i != 1;
        let picks: Vec<_> = (0..6).map(|_| round_robin(&counter, 3, usable).unwrap()).collect();
        assert_eq!(picks, [0, 2, 2, 0, 2, 2]);
        assert_eq!(round_robin(&counter, 3, |_| false), None);
        assert_eq!(round_robin(&counter, 0, |_| true), None);
    }

    /// Seeded, so the choices are the same on every run: the less loaded of each pair wins,
    /// and the load spreads.
    #[test]
    fn least_requests_prefers_the_less_loaded_of_two() {
        let mut rng = Rng::new(42);
        let loads = [10usize, 0, 5, 5];
        let mut count = [0usize; 4];
        for _ in 0..4000 {
            let i = least_requests(&mut rng, 4, |_| true, |i| loads[i]).unwrap();
            count[i] += 1;
        }
        // Upstream 1 (idle) wins every pair it is in: about half of all pairs.
        assert!(count[1] > 1700 && count[1] < 2300, "{count:?}");
        // Upstream 0 (the busiest) never wins a pair.
        assert_eq!(count[0], 0, "{count:?}");
        // An unusable upstream is never chosen, even when idle.
        for _ in 0..100 {
            let i = least_requests(&mut rng, 4, |i| i != 1, |i| loads[i]).unwrap();
            assert_ne!(i, 1);
        }
        assert_eq!(least_requests(&mut rng, 1, |_| true, |_| 0), Some(0));
        assert_eq!(least_requests(&mut rng, 2, |_| false, |_| 0), None);
    }

    /// Consistent hashing: keys spread within 15% of even over three upstreams, and taking
    /// one out moves only the keys that were on it.
    #[test]
    fn consistent_hashing_distribution_and_stability() {
        let names = ["http://10.0.0.1:80", "http://10.0.0.2:80", "http://10.0.0.3:80"];
        let ring = Ring::new(names);
        let keys: Vec<u64> = (0..30_000).map(|k| hash(format!("user-{k}").as_bytes())).collect();
        let mut count = [0usize; 3];
        let before: Vec<usize> = keys.iter().map(|&k| ring.pick(k, |_| true).unwrap()).collect();
        for &i in &before {
            count[i] += 1;
        }
        for c in count {
            assert!((8_500..=11_500).contains(&c), "{count:?}");
        }
        let after: Vec<usize> = keys.iter().map(|&k| ring.pick(k, |i| i != 2).unwrap()).collect();
        for (b, a) in before.iter().zip(&after) {
            if *b != 2 {
                assert_eq!(a, b, "a key not on the removed upstream moved");
            } else {
                assert_ne!(*a, 2);
            }
        }
        // The same names make the same ring.
        let again = Ring::new(names);
        assert!(keys.iter().all(|&k| again.pick(k, |_| true) == ring.pick(k, |_| true)));
        assert_eq!(Ring::new([]).pick(1, |_| true), None);
    }

    #[test]
    fn cookie_values() {
        struct Case {
            line: &'static [u8],
            name: &'static str,
            expect: Option<&'static [u8]>,
        }
        let cases = [
            Case { line: b"a=1; session=xyz; b=2", name: "session", expect: Some(b"xyz") },
            Case { line: b"session=", name: "session", expect: Some(b"") },
            Case { line: b"a=1;b=2", name: "b", expect: Some(b"2") },
            Case { line: b"sessionx=1", name: "session", expect: None },
            Case { line: b"", name: "a", expect: None },
        ];
        for case in cases {
            assert_eq!(cookie(case.line, case.name), case.expect);
        }
    }

    #[test]
    fn request_keys() {
        let header = |n: &str| (n == "x-user").then_some(&b"42"[..]);
        let lines: [&[u8]; 1] = [b"sid=abc"];
        let key =
            |k: &HashKey, ip: Option<IpAddr>| request_key(k, header, lines.iter().copied(), ip);
        assert_eq!(key(&HashKey::Header("x-user".into()), None), Some(hash(b"42")));
        assert_eq!(key(&HashKey::Header("x-other".into()), None), None);
        assert_eq!(key(&HashKey::Cookie("sid".into()), None), Some(hash(b"abc")));
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        assert_eq!(key(&HashKey::ClientAddr, Some(ip)), Some(hash(&[10, 1, 2, 3])));
        assert_eq!(key(&HashKey::ClientAddr, None), None);
    }
}
