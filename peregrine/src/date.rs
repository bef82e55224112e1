//! HTTP dates (RFC 9110 §5.6.7): a per-thread cached IMF-fixdate for the `Date` field, a
//! formatter, and a parser for all three forms recipients must accept.
//!
//! ```text
//! IMF-fixdate  = day-name "," SP date1 SP time-of-day SP GMT   ; Sun, 06 Nov 1994 08:49:37 GMT
//! rfc850-date  = day-name-l "," SP date2 SP time-of-day SP GMT ; Sunday, 06-Nov-94 08:49:37 GMT
//! asctime-date = day-name SP date3 SP time-of-day SP year      ; Sun Nov  6 08:49:37 1994
//! ```

use std::cell::Cell;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An IMF-fixdate, e.g. `Sat, 21 Nov 2026 08:24:00 GMT`: always 29 ASCII bytes.
///
/// # Examples
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let d = peregrine::date::format_imf_fixdate(UNIX_EPOCH + Duration::from_secs(784_111_777));
/// assert_eq!(d.as_str(), "Sun, 06 Nov 1994 08:49:37 GMT");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImfFixdate([u8; 29]);

impl ImfFixdate {
    /// The date as bytes, ready for the wire.
    pub const fn as_bytes(&self) -> &[u8; 29] {
        &self.0
    }

    /// The date as text.
    pub fn as_str(&self) -> &str {
        // Built only by `format_secs`, from ASCII tables and digits.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for ImfFixdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for ImfFixdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

const DAY_NAMES: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const DAY_NAMES_LONG: [&[u8]; 7] =
    [b"Thursday", b"Friday", b"Saturday", b"Sunday", b"Monday", b"Tuesday", b"Wednesday"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// 9999-12-31T23:59:59Z, the last instant a 4-digit year can say.
const MAX_SECS: u64 = 253_402_300_799;

thread_local! {
    /// The second the cached date was formatted for, and the date. `u64::MAX` = never.
    static CACHE: Cell<(u64, ImfFixdate)> = const { Cell::new((u64::MAX, ImfFixdate([b' '; 29]))) };
}

/// The current time as an IMF-fixdate, from a per-thread cache formatted at most once a second.
///
/// Reads the clock (`SystemTime::now()`, a vDSO call) and reformats only when the second has
/// changed; never allocates. A clock before 1970 gives the epoch.
///
/// # Examples
/// ```
/// let d = peregrine::date::now();
/// assert_eq!(d.as_bytes().len(), 29);
/// assert!(d.as_str().ends_with(" GMT"));
/// ```
pub fn now() -> ImfFixdate {
    at_secs(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// The IMF-fixdate of `secs` seconds after the epoch, through the per-thread cache of
/// [`now`]: formatted only when the second differs from the cached one. For a caller with
/// its own (cheaper) clock.
#[inline]
pub(crate) fn at_secs(secs: u64) -> ImfFixdate {
    CACHE.with(|cache| {
        let (cached_secs, date) = cache.get();
        if cached_secs == secs {
            return date;
        }
        let date = format_secs(secs);
        cache.set((secs, date));
        date
    })
}

/// Formats a time as an IMF-fixdate (RFC 9110 §5.6.7), truncated to the second. Times before
/// 1970 give the epoch and times after 9999 give 9999-12-31 23:59:59: a 4-digit year is all the
/// format can carry.
pub fn format_imf_fixdate(t: SystemTime) -> ImfFixdate {
    format_secs(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// A time broken down into its UTC calendar fields, for other date formats (access logs,
/// listings): the same clamping as [`format_imf_fixdate`].
///
/// # Examples
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let t = peregrine::date::utc(UNIX_EPOCH + Duration::from_secs(784_111_777));
/// assert_eq!((t.year, t.month, t.day, t.hour, t.minute, t.second), (1994, 11, 6, 8, 49, 37));
/// assert_eq!(t.month_name(), "Nov");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    /// The year, 1970 to 9999.
    pub year: u32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, 1 to 31.
    pub day: u32,
    /// The hour, 0 to 23.
    pub hour: u32,
    /// The minute, 0 to 59.
    pub minute: u32,
    /// The second, 0 to 59.
    pub second: u32,
}

impl Utc {
    /// The English three-letter month name (`Jan` … `Dec`).
    pub fn month_name(&self) -> &'static str {
        let m = MONTHS[(self.month.clamp(1, 12) - 1) as usize];
        std::str::from_utf8(m).unwrap_or_default()
    }
}

/// `t` in UTC calendar fields, truncated to the second (before 1970 gives the epoch, after
/// 9999 the last second of 9999).
pub fn utc(t: SystemTime) -> Utc {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()).min(MAX_SECS);
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let tod = secs % 86_400;
    Utc {
        year: year as u32,
        month,
        day,
        hour: (tod / 3600) as u32,
        minute: (tod / 60 % 60) as u32,
        second: (tod % 60) as u32,
    }
}

fn format_secs(secs: u64) -> ImfFixdate {
    let secs = secs.min(MAX_SECS);
    let days = (secs / 86_400) as i64;
    let tod = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut b = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    b[..3].copy_from_slice(DAY_NAMES[(days % 7) as usize]);
    put2(&mut b[5..7], day);
    b[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    put2(&mut b[12..14], (year / 100) as u32);
    put2(&mut b[14..16], (year % 100) as u32);
    put2(&mut b[17..19], (tod / 3600) as u32);
    put2(&mut b[20..22], (tod / 60 % 60) as u32);
    put2(&mut b[23..25], (tod % 60) as u32);
    ImfFixdate(b)
}

fn put2(dst: &mut [u8], n: u32) {
    dst[0] = b'0' + (n / 10 % 10) as u8;
    dst[1] = b'0' + (n % 10) as u8;
}

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31) in the proleptic Gregorian
/// calendar (H. Hinnant's `civil_from_days`: shift the year to start in March so the leap day
/// is last, then split 400-year eras).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// (year, month 1..=12, day 1..=31) → days since 1970-01-01 (inverse of `civil_from_days`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if month > 2 { month - 3 } else { month + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses an HTTP-date: IMF-fixdate, or the obsolete rfc850-date and asctime-date forms that
/// RFC 9110 §5.6.7 says recipients MUST accept.
///
/// Strict: exact spacing, case-sensitive names (`%s` in the ABNF), `GMT`, hour ≤ 23,
/// minute and second ≤ 59, a day that exists in its month, and a day name that matches the
/// date. A two-digit rfc850 year more than 50 years in the future is taken from the previous
/// century (RFC 9110 §5.6.7), which reads the clock for the current year.
///
/// # Examples
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use peregrine::date::parse_http_date;
/// let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
/// assert_eq!(parse_http_date(b"Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
/// assert_eq!(parse_http_date(b"Sun Nov  6 08:49:37 1994"), Some(t));
/// assert_eq!(parse_http_date(b"Mon, 06 Nov 1994 08:49:37 GMT"), None); // wrong day name
/// ```
pub fn parse_http_date(value: &[u8]) -> Option<SystemTime> {
    let year_now = if value.len() == 29 || value.len() == 24 {
        0 // not needed by the fixed-width forms
    } else {
        let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        civil_from_days((secs / 86_400) as i64).0
    };
    parse_at(value, year_now)
}

/// The fields of a date before validation.
struct Parts {
    weekday: usize, // index into DAY_NAMES
    year: i64,
    month: u32,
    day: u32,
    time: [u32; 3],
}

fn parse_at(v: &[u8], year_now: i64) -> Option<SystemTime> {
    let parts = match v.len() {
        29 => imf_fixdate(v)?,
        24 => asctime(v)?,
        _ => rfc850(v, year_now)?,
    };
    let Parts { weekday, year, month, day, time: [h, m, s] } = parts;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if days.rem_euclid(7) as usize != weekday {
        return None;
    }
    let secs = days * 86_400 + i64::from(h * 3600 + m * 60 + s);
    if secs >= 0 {
        UNIX_EPOCH.checked_add(Duration::from_secs(secs as u64))
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs()))
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(v: &[u8]) -> Option<Parts> {
    if &v[3..5] != b", " || v[7] != b' ' || v[11] != b' ' || v[16] != b' ' || &v[25..] != b" GMT" {
        return None;
    }
    Some(Parts {
        weekday: DAY_NAMES.iter().position(|d| &v[..3] == *d)?,
        day: digits(&v[5..7])?,
        month: month(&v[8..11])?,
        year: i64::from(digits(&v[12..16])?),
        time: time_of_day(&v[17..25])?,
    })
}

/// `Sun Nov  6 08:49:37 1994` (day = 2DIGIT / ( SP DIGIT )).
fn asctime(v: &[u8]) -> Option<Parts> {
    if v[3] != b' ' || v[7] != b' ' || v[10] != b' ' || v[19] != b' ' {
        return None;
    }
    let day = if v[8] == b' ' { digits(&v[9..10])? } else { digits(&v[8..10])? };
    Some(Parts {
        weekday: DAY_NAMES.iter().position(|d| &v[..3] == *d)?,
        day,
        month: month(&v[4..7])?,
        year: i64::from(digits(&v[20..24])?),
        time: time_of_day(&v[11..19])?,
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn rfc850(v: &[u8], year_now: i64) -> Option<Parts> {
    let comma = v.iter().position(|&b| b == b',')?;
    let weekday = DAY_NAMES_LONG.iter().position(|d| &v[..comma] == *d)?;
    let rest = &v[comma..];
    if rest.len() != 24
        || &rest[..2] != b", "
        || rest[4] != b'-'
        || rest[8] != b'-'
        || rest[11] != b' '
        || &rest[20..] != b" GMT"
    {
        return None;
    }
    // RFC 9110 §5.6.7: "Recipients of a timestamp value in rfc850-date format, which uses a
    // two-digit year, MUST interpret a timestamp that appears to be more than 50 years in the
    // future as representing the most recent year in the past that had the same last two
    // digits."
    let yy = i64::from(digits(&rest[9..11])?);
    let mut year = year_now - year_now.rem_euclid(100) + yy;
    if year > year_now + 50 {
        year -= 100;
    }
    Some(Parts {
        weekday,
        day: digits(&rest[2..4])?,
        month: month(&rest[5..8])?,
        year,
        time: time_of_day(&rest[12..20])?,
    })
}

fn month(s: &[u8]) -> Option<u32> {
    MONTHS.iter().position(|m| s == *m).map(|i| i as u32 + 1)
}

/// `time-of-day = hour ":" minute ":" second`, each 2DIGIT.
fn time_of_day(s: &[u8]) -> Option<[u32; 3]> {
    if s[2] != b':' || s[5] != b':' {
        return None;
    }
    Some([digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?])
}

fn digits(s: &[u8]) -> Option<u32> {
    s.iter().try_fold(0u32, |n, &b| b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn formats_like_httpdate_rfc9110_5_6_7() {
        // Every day boundary ±1 s over 1970–2100, then a stride over the whole range.
        let mut secs: Vec<u64> =
            (0..48_000u64).flat_map(|d| [d * 86_400, d * 86_400 + 86_399]).collect();
        secs.extend((0..MAX_SECS).step_by(7_777_777));
        secs.extend([951_782_400, 4_107_542_400, MAX_SECS]); // 2000-02-29, 2100-03-01
        for s in secs {
            let ours = format_imf_fixdate(at(s));
            let theirs = httpdate::fmt_http_date(at(s));
            assert_eq!(ours.as_str(), theirs, "{s}");
            assert_eq!(parse_http_date(ours.as_bytes()), Some(at(s)), "{ours}");
        }
    }

    #[test]
    fn clamps_outside_the_4_digit_years() {
        assert_eq!(
            format_imf_fixdate(UNIX_EPOCH - Duration::from_secs(1)).as_str(),
            "Thu, 01 Jan 1970 00:00:00 GMT"
        );
        assert_eq!(
            format_imf_fixdate(at(MAX_SECS + 100)).as_str(),
            "Fri, 31 Dec 9999 23:59:59 GMT"
        );
    }

    #[test]
    fn now_is_cached_per_second() {
        let a = now();
        let b = now();
        let t = SystemTime::now();
        // Either the same second, or the clock ticked between the calls.
        assert!(a == b || parse_http_date(b.as_bytes()) > parse_http_date(a.as_bytes()));
        let parsed = parse_http_date(b.as_bytes()).unwrap();
        assert!(t.duration_since(parsed).unwrap() < Duration::from_secs(2));
        assert_eq!(format!("{a}").len(), 29);
    }

    struct Case {
        input: &'static [u8],
        expect: Option<u64>,
    }

    #[test]
    fn parse_table_rfc9110_5_6_7() {
        const T: Option<u64> = Some(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let cases = [
            Case { input: b"Sun, 06 Nov 1994 08:49:37 GMT", expect: T },
            Case { input: b"Sunday, 06-Nov-94 08:49:37 GMT", expect: T },
            Case { input: b"Sun Nov  6 08:49:37 1994", expect: T },
            Case { input: b"Sun Nov 06 08:49:37 1994", expect: T },
            Case { input: b"Thu, 01 Jan 1970 00:00:00 GMT", expect: Some(0) },
            Case { input: b"Tue, 29 Feb 2000 12:00:00 GMT", expect: Some(951_825_600) },
            Case { input: b"Fri, 31 Dec 9999 23:59:59 GMT", expect: Some(MAX_SECS) },
            // Wrong day name, case, spacing, zone, ranges.
            Case { input: b"Mon, 06 Nov 1994 08:49:37 GMT", expect: None },
            Case { input: b"sun, 06 Nov 1994 08:49:37 GMT", expect: None },
            Case { input: b"Sun, 06 nov 1994 08:49:37 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:49:37 UTC", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:49:37 gmt", expect: None },
            Case { input: b"Sun,  6 Nov 1994 08:49:37 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:49:37 GMT ", expect: None },
            Case { input: b"Sun, 06 Nov 1994 8:49:37 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 24:00:00 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:60:00 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:49:60 GMT", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08-49-37 GMT", expect: None },
            Case { input: b"Sun, 06 Nov +994 08:49:37 GMT", expect: None },
            Case { input: b"Thu, 29 Feb 2001 00:00:00 GMT", expect: None },
            Case { input: b"Mon, 31 Apr 2001 00:00:00 GMT", expect: None },
            Case { input: b"Sun, 00 Nov 1994 08:49:37 GMT", expect: None },
            Case { input: b"Sun Nov 6 08:49:37 1994", expect: None },
            Case { input: b"Sun Nov  6 08:49:37 1994 ", expect: None },
            Case { input: b"Sunday, 06-Nov-1994 08:49:37 GMT", expect: None },
            Case { input: b"Sun, 06-Nov-94 08:49:37 GMT", expect: None },
            Case { input: b"Sunday, 06 Nov 94 08:49:37 GMT", expect: None },
            Case { input: b"", expect: None },
            Case { input: b",", expect: None },
            Case { input: b"Sun, 06 Nov 1994 08:49:37 GM\xff", expect: None },
        ];
        for c in cases {
            assert_eq!(parse_at(c.input, 2026), c.expect.map(at), "{:?}", c.input.escape_ascii());
        }
        // Before 1970 is a valid HTTP-date too.
        let t = parse_http_date(b"Wed, 31 Dec 1969 23:59:59 GMT");
        assert_eq!(t, Some(UNIX_EPOCH - Duration::from_secs(1)));
        assert!(parse_http_date(b"Sat, 01 Jan 0000 00:00:00 GMT").is_some());
    }

    #[test]
    fn rfc850_two_digit_year_rfc9110_5_6_7() {
        // In 2026, "94" is 1994 (2094 is more than 50 years ahead) and "70" is 2070.
        assert_eq!(parse_at(b"Sunday, 06-Nov-94 08:49:37 GMT", 2026), Some(at(784_111_777)));
        let y2070 = days_from_civil(2070, 1, 1) as u64 * 86_400;
        assert_eq!(parse_at(b"Wednesday, 01-Jan-70 00:00:00 GMT", 2026), Some(at(y2070)));
        assert_eq!(parse_at(b"Thursday, 01-Jan-70 00:00:00 GMT", 2026), None);
        assert_eq!(parse_at(b"Thursday, 01-Jan-70 00:00:00 GMT", 2019), Some(at(0)));
        assert_eq!(parse_at(b"Thursday, 01-Jan-70 00:00:00 GMT", 1990), Some(at(0)));
    }

    #[test]
    fn civil_round_trip() {
        for d in -800_000..800_000i64 {
            let (y, m, day) = civil_from_days(d);
            assert!(day >= 1 && day <= days_in_month(y, m));
            assert_eq!(days_from_civil(y, m, day), d);
        }
    }

    proptest! {
        #[test]
        fn agrees_with_httpdate(s in 0..=MAX_SECS) {
            let ours = format_imf_fixdate(at(s));
            prop_assert_eq!(ours.as_str(), httpdate::fmt_http_date(at(s)));
            prop_assert_eq!(parse_http_date(ours.as_bytes()), Some(at(s)));
            prop_assert_eq!(httpdate::parse_http_date(ours.as_str()).ok(), Some(at(s)));
        }

        #[test]
        fn never_panics(v in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = parse_http_date(&v);
        }
    }
}
