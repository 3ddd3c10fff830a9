//! Event timestamps: the named formats packs use, written into a buffer with no allocation.
//! A `TsWriter` caches the formatted date-and-seconds part of the last second it wrote, so
//! events in the same second only append their fraction. Civil dates come from Howard
//! Hinnant's days-from-civil algorithms (proleptic Gregorian, UTC).

use crate::bytes::{ArrayBuf, Sink, write_i64, write_u64, write_u64_padded};

/// Nanoseconds since the Unix epoch, UTC.
pub type UnixNs = i64;

pub const NS_PER_SEC: i64 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TsFormat {
    /// `2025-03-14T09:21:07Z`
    Rfc3339,
    /// `2025-03-14T09:21:07.123Z`
    Rfc3339Ms,
    /// `2025-03-14T09:21:07.123456Z`
    Rfc3339Us,
    /// `2025-03-14T09:21:07.1234567Z` (Windows SystemTime, 100 ns)
    Windows,
    /// `2025-03-14T09:21:07` (no zone)
    IsoLocal,
    /// `1741944067`
    EpochS,
    /// `1741944067123`
    EpochMs,
    /// `1741944067.123`
    EpochSMs,
    /// `2025-03-14T09:21:07.123Z`
    Rfc5424,
    /// `Mar 14 09:21:07`
    Rfc3164,
    /// `2025/03/14 09:21:07`
    Panos,
    /// `Mar 14 2025 09:21:07`
    Cef,
    /// `Mar 14, 2025 9:21:07 AM` (Java's medium date-time style; IAM `createDate` in CloudTrail)
    JavaMedium,
}

impl TsFormat {
    pub const NAMES: &'static [&'static str] = &[
        "rfc3339",
        "rfc3339_ms",
        "rfc3339_us",
        "windows",
        "iso_local",
        "epoch_s",
        "epoch_ms",
        "epoch_s_ms",
        "rfc5424",
        "rfc3164",
        "panos",
        "cef",
        "java_medium",
    ];
    const ALL: [TsFormat; 13] = [
        TsFormat::Rfc3339,
        TsFormat::Rfc3339Ms,
        TsFormat::Rfc3339Us,
        TsFormat::Windows,
        TsFormat::IsoLocal,
        TsFormat::EpochS,
        TsFormat::EpochMs,
        TsFormat::EpochSMs,
        TsFormat::Rfc5424,
        TsFormat::Rfc3164,
        TsFormat::Panos,
        TsFormat::Cef,
        TsFormat::JavaMedium,
    ];

    pub fn parse(s: &str) -> Option<TsFormat> {
        Self::NAMES
            .iter()
            .zip(Self::ALL)
            .find(|(n, _)| **n == s)
            .map(|(_, f)| f)
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .zip(Self::NAMES)
            .find(|(f, _)| **f == self)
            .map(|(_, n)| *n)
            .or_else(|| Self::NAMES.first().copied())
            .unwrap_or_default()
    }
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Days since 1970-01-01 → (year, month 1..=12, day 1..=31).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Day of the week for days since the epoch: 0 = Monday … 6 = Sunday.
pub fn weekday(days: i64) -> u32 {
    (days + 3).rem_euclid(7) as u32
}

/// Writes timestamps in one format, caching the part that only changes once a second.
#[derive(Clone)]
pub struct TsWriter {
    format: TsFormat,
    cached_sec: i64,
    prefix: [u8; 24],
    prefix_len: usize,
}

#[allow(
    clippy::indexing_slicing,
    reason = "per-event hot path; prefix has 24 bytes and prefix_len is the length of a date part \
              plus hh:mm:ss that fill_date wrote from a 24-byte ArrayBuf (>= 8); civil_from_days \
              gives a month in 1..=12 and MONTHS has 12"
)]
impl TsWriter {
    pub fn new(format: TsFormat) -> Self {
        TsWriter {
            format,
            cached_sec: i64::MIN,
            prefix: [0; 24],
            prefix_len: 0,
        }
    }

    pub fn format(&self) -> TsFormat {
        self.format
    }

    /// Appends `t` in this writer's format to `out`.
    pub fn write(&mut self, t: UnixNs, out: &mut Vec<u8>) {
        let sec = t.div_euclid(NS_PER_SEC);
        let nanos = t.rem_euclid(NS_PER_SEC) as u64;
        match self.format {
            TsFormat::EpochS => return write_i64(sec, out),
            TsFormat::EpochMs => {
                return write_i64(sec * 1000 + (nanos / 1_000_000) as i64, out);
            }
            TsFormat::EpochSMs => {
                write_i64(sec, out);
                out.push(b'.');
                return write_u64_padded(nanos / 1_000_000, 3, out);
            }
            TsFormat::JavaMedium => return write_java_medium(sec, out),
            _ => {}
        }
        if sec != self.cached_sec {
            self.fill_prefix(sec);
        }
        out.put_slice(&self.prefix[..self.prefix_len]);
        match self.format {
            TsFormat::Rfc3339 => out.push(b'Z'),
            TsFormat::Rfc3339Ms | TsFormat::Rfc5424 => {
                out.push(b'.');
                write_u64_padded(nanos / 1_000_000, 3, out);
                out.push(b'Z');
            }
            TsFormat::Rfc3339Us => {
                out.push(b'.');
                write_u64_padded(nanos / 1_000, 6, out);
                out.push(b'Z');
            }
            TsFormat::Windows => {
                out.push(b'.');
                write_u64_padded(nanos / 100, 7, out);
                out.push(b'Z');
            }
            _ => {}
        }
    }

    fn fill_prefix(&mut self, sec: i64) {
        let days = sec.div_euclid(86_400);
        let sod = sec.rem_euclid(86_400) as u64;
        let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
        if days != self.cached_sec.div_euclid(86_400) || self.cached_sec == i64::MIN {
            self.fill_date(days);
        }
        // The prefix always ends with `hh:mm:ss`; only those digits change within a day.
        let t = &mut self.prefix[self.prefix_len - 8..self.prefix_len];
        t.copy_from_slice(&[
            b'0' + (hh / 10) as u8,
            b'0' + (hh % 10) as u8,
            b':',
            b'0' + (mm / 10) as u8,
            b'0' + (mm % 10) as u8,
            b':',
            b'0' + (ss / 10) as u8,
            b'0' + (ss % 10) as u8,
        ]);
        self.cached_sec = sec;
    }

    /// Writes the date part for `days` and reserves `hh:mm:ss` after it.
    #[cold]
    fn fill_date(&mut self, days: i64) {
        let (y, m, d) = civil_from_days(days);
        let mut v = ArrayBuf::<24>::new();
        let y = y.clamp(0, 9999) as u64;
        let mon = MONTHS[(m - 1) as usize];
        match self.format {
            TsFormat::Rfc3164 => {
                v.put_slice(mon);
                v.put(b' ');
                if d < 10 {
                    v.put(b' ');
                }
                write_u64(u64::from(d), &mut v);
                v.put(b' ');
            }
            TsFormat::Cef => {
                v.put_slice(mon);
                v.put(b' ');
                write_u64_padded(u64::from(d), 2, &mut v);
                v.put(b' ');
                write_u64_padded(y, 4, &mut v);
                v.put(b' ');
            }
            TsFormat::Panos => {
                write_u64_padded(y, 4, &mut v);
                v.put(b'/');
                write_u64_padded(u64::from(m), 2, &mut v);
                v.put(b'/');
                write_u64_padded(u64::from(d), 2, &mut v);
                v.put(b' ');
            }
            _ => {
                write_u64_padded(y, 4, &mut v);
                v.put(b'-');
                write_u64_padded(u64::from(m), 2, &mut v);
                v.put(b'-');
                write_u64_padded(u64::from(d), 2, &mut v);
                v.put(b'T');
            }
        }
        v.put_slice(b"00:00:00");
        self.prefix[..v.len].copy_from_slice(v.as_slice());
        self.prefix_len = v.len;
    }
}

/// `Mar 14, 2025 9:21:07 AM`: the hour is 12-hour and unpadded, so the per-second prefix cache
/// does not apply (the format is rare: IAM responses in CloudTrail).
#[allow(
    clippy::indexing_slicing,
    reason = "civil_from_days gives a month in 1..=12 and MONTHS has 12 entries"
)]
fn write_java_medium(sec: i64, out: &mut Vec<u8>) {
    let (y, m, d) = civil_from_days(sec.div_euclid(86_400));
    let sod = sec.rem_euclid(86_400) as u64;
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    out.put_slice(MONTHS[(m - 1) as usize]);
    out.push(b' ');
    write_u64(u64::from(d), out);
    out.put_slice(b", ");
    write_u64_padded(y.clamp(0, 9999) as u64, 4, out);
    out.push(b' ');
    write_u64(if hh % 12 == 0 { 12 } else { hh % 12 }, out);
    out.push(b':');
    write_u64_padded(mm, 2, out);
    out.push(b':');
    write_u64_padded(ss, 2, out);
    out.put_slice(if hh < 12 { b" AM" } else { b" PM" });
}

/// Parses an RFC 3339 time (`2026-01-05T00:00:00Z`, fractions and offsets allowed).
pub fn parse_rfc3339(s: &str) -> Option<UnixNs> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// The current time from the system clock.
pub fn now() -> UnixNs {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2025-03-14T09:21:07.123456789Z
    const T: i64 = 1_741_944_067_123_456_789;

    fn fmt(f: TsFormat, t: i64) -> String {
        let mut w = TsWriter::new(f);
        let mut out = Vec::new();
        w.write(t, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_format() {
        let want = [
            (TsFormat::Rfc3339, "2025-03-14T09:21:07Z"),
            (TsFormat::Rfc3339Ms, "2025-03-14T09:21:07.123Z"),
            (TsFormat::Rfc3339Us, "2025-03-14T09:21:07.123456Z"),
            (TsFormat::Windows, "2025-03-14T09:21:07.1234567Z"),
            (TsFormat::IsoLocal, "2025-03-14T09:21:07"),
            (TsFormat::EpochS, "1741944067"),
            (TsFormat::EpochMs, "1741944067123"),
            (TsFormat::EpochSMs, "1741944067.123"),
            (TsFormat::Rfc5424, "2025-03-14T09:21:07.123Z"),
            (TsFormat::Rfc3164, "Mar 14 09:21:07"),
            (TsFormat::Panos, "2025/03/14 09:21:07"),
            (TsFormat::Cef, "Mar 14 2025 09:21:07"),
            (TsFormat::JavaMedium, "Mar 14, 2025 9:21:07 AM"),
        ];
        for (f, w) in want {
            assert_eq!(fmt(f, T), w, "{}", f.name());
            assert_eq!(TsFormat::parse(f.name()), Some(f));
        }
        assert_eq!(
            fmt(TsFormat::Rfc3164, 1_741_000_000 * NS_PER_SEC),
            "Mar  3 11:06:40"
        );
        // 2025-03-03T00:06:40Z and 2025-03-03T13:06:40Z: midnight and noon hours are 12.
        let t = 1_740_960_400 * NS_PER_SEC;
        assert_eq!(fmt(TsFormat::JavaMedium, t), "Mar 3, 2025 12:06:40 AM");
        assert_eq!(
            fmt(TsFormat::JavaMedium, t + 13 * 3600 * NS_PER_SEC),
            "Mar 3, 2025 1:06:40 PM"
        );
        assert_eq!(
            fmt(TsFormat::JavaMedium, t + 12 * 3600 * NS_PER_SEC),
            "Mar 3, 2025 12:06:40 PM"
        );
    }

    #[test]
    fn cache_is_per_second_and_correct_across_seconds() {
        let mut w = TsWriter::new(TsFormat::Rfc3339Ms);
        let mut out = Vec::new();
        for t in [T, T + 1_000_000, T + NS_PER_SEC, T - 86_400 * NS_PER_SEC] {
            out.clear();
            w.write(t, &mut out);
            assert_eq!(
                String::from_utf8(out.clone()).unwrap(),
                fmt(TsFormat::Rfc3339Ms, t)
            );
        }
        assert_eq!(
            fmt(TsFormat::Rfc3339Ms, T + NS_PER_SEC),
            "2025-03-14T09:21:08.123Z"
        );
    }

    #[test]
    fn civil_round_trip_and_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        for d in (-800_000..800_000).step_by(997) {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(weekday(0), 3); // 1970-01-01 was a Thursday
        assert_eq!(weekday(days_from_civil(2026, 11, 30)), 0); // a Monday
    }

    #[test]
    fn parse_matches_format() {
        let t = parse_rfc3339("2025-03-14T09:21:07.123Z").unwrap();
        assert_eq!(fmt(TsFormat::Rfc3339Ms, t), "2025-03-14T09:21:07.123Z");
        assert!(parse_rfc3339("yesterday").is_none());
    }
}
