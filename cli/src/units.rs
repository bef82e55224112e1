//! Sizes (`32KiB`, `2MiB`) and durations (`10s`, `500ms`, `2m`) as flags take and show them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A byte count: digits with an optional binary suffix (`k`/`KiB` = 1024, `m`/`MiB`,
/// `g`/`GiB`, case-insensitive; `B` or none = bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);

impl FromStr for Size {
    type Err = String;

    fn from_str(s: &str) -> Result<Size, String> {
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (digits, unit) = s.split_at(split);
        let n: u64 = digits.parse().map_err(|_| format!("'{s}' is not a size like 64KiB"))?;
        let mul: u64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            "g" | "gib" => 1 << 30,
            _ => return Err(format!("unknown unit '{unit}' (use B, KiB, MiB or GiB)")),
        };
        n.checked_mul(mul).map(Size).ok_or_else(|| format!("'{s}' is too large"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("0"),
            n if n % (1 << 30) == 0 => write!(f, "{}GiB", n >> 30),
            n if n % (1 << 20) == 0 => write!(f, "{}MiB", n >> 20),
            n if n % (1 << 10) == 0 => write!(f, "{}KiB", n >> 10),
            n => write!(f, "{n}"),
        }
    }
}

/// A duration: digits and a unit, `ms`, `s`, `m` or `h` (`0` alone is zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dur(pub Duration);

impl FromStr for Dur {
    type Err = String;

    fn from_str(s: &str) -> Result<Dur, String> {
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (digits, unit) = s.split_at(split);
        let n: u64 =
            digits.parse().map_err(|_| format!("'{s}' is not a duration like 10s or 500ms"))?;
        let ms: u64 = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "" if n == 0 => 0,
            _ => return Err(format!("'{s}': give a unit, ms, s, m or h (e.g. 10s)")),
        };
        let ms = n.checked_mul(ms).ok_or_else(|| format!("'{s}' is too long"))?;
        Ok(Dur(Duration::from_millis(ms)))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        match ms {
            0 => f.write_str("0s"),
            n if n % 3_600_000 == 0 => write!(f, "{}h", n / 3_600_000),
            n if n % 60_000 == 0 => write!(f, "{}m", n / 60_000),
            n if n % 1_000 == 0 => write!(f, "{}s", n / 1_000),
            n => write!(f, "{n}ms"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_show() {
        struct Case {
            input: &'static str,
            expect: Result<u64, ()>,
            shown: &'static str,
        }
        let cases = [
            Case { input: "0", expect: Ok(0), shown: "0" },
            Case { input: "100", expect: Ok(100), shown: "100" },
            Case { input: "1536B", expect: Ok(1536), shown: "1536" },
            Case { input: "32KiB", expect: Ok(32 << 10), shown: "32KiB" },
            Case { input: "32k", expect: Ok(32 << 10), shown: "32KiB" },
            Case { input: "2MiB", expect: Ok(2 << 20), shown: "2MiB" },
            Case { input: "1g", expect: Ok(1 << 30), shown: "1GiB" },
            Case { input: "1024KiB", expect: Ok(1 << 20), shown: "1MiB" },
            Case { input: "", expect: Err(()), shown: "" },
            Case { input: "KiB", expect: Err(()), shown: "" },
            Case { input: "-1", expect: Err(()), shown: "" },
            Case { input: "3 KiB", expect: Err(()), shown: "" },
            Case { input: "2KB", expect: Err(()), shown: "" },
            Case { input: "99999999999999999999", expect: Err(()), shown: "" },
            Case { input: "99999999999GiB", expect: Err(()), shown: "" },
        ];
        for c in cases {
            let got = c.input.parse::<Size>();
            assert_eq!(got.as_ref().map(|s| s.0).map_err(|_| ()), c.expect, "{}", c.input);
            if let Ok(s) = got {
                assert_eq!(s.to_string(), c.shown, "{}", c.input);
            }
        }
    }

    #[test]
    fn durations_parse_and_show() {
        struct Case {
            input: &'static str,
            expect: Result<u64, ()>,
            shown: &'static str,
        }
        let cases = [
            Case { input: "10s", expect: Ok(10_000), shown: "10s" },
            Case { input: "500ms", expect: Ok(500), shown: "500ms" },
            Case { input: "1500ms", expect: Ok(1500), shown: "1500ms" },
            Case { input: "2m", expect: Ok(120_000), shown: "2m" },
            Case { input: "75s", expect: Ok(75_000), shown: "75s" },
            Case { input: "120s", expect: Ok(120_000), shown: "2m" },
            Case { input: "1h", expect: Ok(3_600_000), shown: "1h" },
            Case { input: "0", expect: Ok(0), shown: "0s" },
            Case { input: "0s", expect: Ok(0), shown: "0s" },
            Case { input: "10", expect: Err(()), shown: "" },
            Case { input: "s", expect: Err(()), shown: "" },
            Case { input: "1.5s", expect: Err(()), shown: "" },
            Case { input: "10 s", expect: Err(()), shown: "" },
            Case { input: "5d", expect: Err(()), shown: "" },
        ];
        for c in cases {
            let got = c.input.parse::<Dur>();
            let ms = got.as_ref().map(|d| d.0.as_millis() as u64).map_err(|_| ());
            assert_eq!(ms, c.expect, "{}", c.input);
            if let Ok(d) = got {
                assert_eq!(d.to_string(), c.shown, "{}", c.input);
            }
        }
    }
}
