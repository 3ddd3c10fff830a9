//! Units in config values: durations (`250ms`, `90s`, `5m`, `1h30m`, `14d`), byte sizes
//! (`512KB`, `1MiB`, `2MB`) and data rates (`20MB/s`, `1.5GB/h`, `500GB/day`). Decimal prefixes are powers of 1000 (KB = 1000 B), binary prefixes
//! powers of 1024 (KiB = 1024 B), as the README states. Parsing is pure and total: every input
//! gives a value or a message that says what was expected.

use std::fmt;
use std::time::Duration;

/// A duration written with units. Kept as nanoseconds so every unit is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub Duration);

/// A byte size written with units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Size(pub u64);

const DURATION_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];

/// Parses `250ms`, `90s`, `5m`, `1h30m`, `1.5s`, `14d`. A bare `0` is zero; any other bare
/// number is refused, because a forgotten unit is the classic mistake.
pub fn parse_duration(text: &str) -> Result<Dur, String> {
    let s = text.trim();
    let bad =
        || format!("{text:?} is not a duration (use ms, s, m, h or d, e.g. 250ms, 90s, 1h30m)");
    if s.is_empty() {
        return Err(bad());
    }
    if s == "0" {
        return Ok(Dur(Duration::ZERO));
    }
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if num_len == 0 {
            return Err(bad());
        }
        let (num, tail) = rest.split_at(num_len);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let factor = DURATION_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, f)| *f)
            .ok_or_else(bad)?;
        total = total
            .checked_add(scale(num, factor).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        rest = next;
    }
    let nanos = u64::try_from(total).map_err(|_| format!("{text:?} is too long a duration"))?;
    Ok(Dur(Duration::from_nanos(nanos)))
}

/// Parses `512KB`, `1MiB`, `2MB`, `64B` or a bare number of bytes.
pub fn parse_size(text: &str) -> Result<Size, String> {
    let s = text.trim();
    let bad = || format!("{text:?} is not a size (use B, KB, MB, GB, KiB, MiB, GiB, e.g. 512KB)");
    let num_len = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    if num_len == 0 {
        return Err(bad());
    }
    let (num, unit) = s.split_at(num_len);
    let unit = unit.trim_start();
    let factor = if unit.is_empty() {
        1
    } else {
        SIZE_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, f)| *f)
            .ok_or_else(bad)?
    };
    let bytes = scale(num, u128::from(factor)).ok_or_else(bad)?;
    u64::try_from(bytes)
        .map(Size)
        .map_err(|_| format!("{text:?} is too large a size"))
}

/// A data rate: a byte size per unit of time (`20MB/s`, `1.5GB/h`, `500GB/day`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRate {
    pub bytes: Size,
    /// The unit of time, by its name as written back (`s`, `min`, `h`, `day`).
    pub per: &'static str,
}

/// The units of time a data rate may be per, in seconds (`m` is minutes, as in durations).
const RATE_UNITS: &[(&str, &str, u64)] = &[
    ("s", "s", 1),
    ("sec", "s", 1),
    ("m", "min", 60),
    ("min", "min", 60),
    ("h", "h", 3_600),
    ("d", "day", 86_400),
    ("day", "day", 86_400),
];

impl DataRate {
    /// Seconds in the unit of time.
    fn seconds(&self) -> u64 {
        RATE_UNITS
            .iter()
            .find(|(_, name, _)| *name == self.per)
            .map_or(1, |(_, _, s)| *s)
    }

    pub fn bytes_per_s(&self) -> f64 {
        self.bytes.0 as f64 / self.seconds() as f64
    }
}

/// Parses `20MB/s`, `1.5GB/h`, `500GB/day`, `300KiB/min`: a size (as `parse_size` takes it,
/// a unit required), a slash, and `s`, `min` (or `m`), `h` or `day` (or `d`).
pub fn parse_data_rate(text: &str) -> Result<DataRate, String> {
    let bad = || {
        format!(
            "{text:?} is not a data rate (a size per s, min, h or day, e.g. 20MB/s, 1.5GB/h, 500GB/day)"
        )
    };
    let (size, per) = text.trim().split_once('/').ok_or_else(bad)?;
    let size = size.trim();
    // A bare number is refused: bytes or megabytes? The forgotten unit again.
    if size.is_empty() || size.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let bytes = parse_size(size).map_err(|_| bad())?;
    let per = RATE_UNITS
        .iter()
        .find(|(u, _, _)| *u == per.trim())
        .map(|(_, name, _)| *name)
        .ok_or_else(bad)?;
    Ok(DataRate { bytes, per })
}

impl fmt::Display for DataRate {
    /// `20MB/s`, `1500MB/h`, `1MiB/s`: the size in the largest decimal unit that divides it
    /// (rates are mostly asked for in decimal units), else as `Size` writes it; then the unit
    /// of time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bytes.0;
        for (unit, factor) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("KB", 1_000)] {
            if b >= factor && b.is_multiple_of(factor) {
                return write!(f, "{}{unit}/{}", b / factor, self.per);
            }
        }
        write!(f, "{}/{}", self.bytes, self.per)
    }
}

/// `num` (digits with at most one `.`) times `factor`, exact where the result is whole;
/// fractions below one unit of `factor` are dropped.
fn scale(num: &str, factor: u128) -> Option<u128> {
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) if !f.contains('.') => (w, f),
        Some(_) => return None,
        None => (num, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let whole_v: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut value = whole_v.checked_mul(factor)?;
    if !frac.is_empty() {
        if frac.len() > 18 {
            return None;
        }
        let frac_v: u128 = frac.parse().ok()?;
        let denom = 10u128.pow(frac.len() as u32);
        value = value.checked_add(frac_v.checked_mul(factor)? / denom)?;
    }
    Some(value)
}

impl fmt::Display for Dur {
    /// Writes the value as a sum of units, largest first: `1h30m`, `250ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut n = self.0.as_nanos();
        if n == 0 {
            return f.write_str("0s");
        }
        for (unit, factor) in DURATION_UNITS.iter().rev() {
            if n >= *factor {
                write!(f, "{}{unit}", n / factor)?;
                n %= factor;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, factor) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if b >= factor && b.is_multiple_of(factor) {
                return write!(f, "{}{unit}", b / factor);
            }
        }
        for (unit, factor) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("KB", 1_000)] {
            if b >= factor && b.is_multiple_of(factor) {
                return write!(f, "{}{unit}", b / factor);
            }
        }
        write!(f, "{b}B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> u128 {
        parse_duration(s).unwrap().0.as_nanos()
    }

    #[test]
    fn durations() {
        assert_eq!(d("250ms"), 250_000_000);
        assert_eq!(d("90s"), 90_000_000_000);
        assert_eq!(d("5m"), 300_000_000_000);
        assert_eq!(d("1h30m"), 5_400_000_000_000);
        assert_eq!(d("1.5s"), 1_500_000_000);
        assert_eq!(d("14d"), 14 * 86_400_000_000_000);
        assert_eq!(d("0"), 0);
        assert_eq!(d(" 10s "), 10_000_000_000);
        assert_eq!(d("2m30s500ms"), 150_500_000_000);
    }

    #[test]
    fn bad_durations() {
        for s in [
            "",
            "10",
            "s",
            "5x",
            "1..5s",
            "ms",
            "-5s",
            "5 s",
            "1h30",
            "999999999999999999999d",
        ] {
            let e = parse_duration(s).unwrap_err();
            assert!(e.contains("duration"), "{s}: {e}");
        }
    }

    #[test]
    fn sizes() {
        let z = |s: &str| parse_size(s).unwrap().0;
        assert_eq!(z("512KB"), 512_000);
        assert_eq!(z("1MiB"), 1_048_576);
        assert_eq!(z("2MB"), 2_000_000);
        assert_eq!(z("64B"), 64);
        assert_eq!(z("4096"), 4096);
        assert_eq!(z("1.5KiB"), 1536);
        assert_eq!(z("1 GiB"), 1 << 30);
    }

    #[test]
    fn bad_sizes() {
        for s in [
            "",
            "12XB",
            "KB",
            "1kb",
            "-1KB",
            "1.2.3MB",
            "99999999999999999999GB",
        ] {
            let e = parse_size(s).unwrap_err();
            assert!(e.contains("size"), "{s}: {e}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["250ms", "90s", "5m", "1h30m", "14d", "1s500ms"] {
            let v = parse_duration(s).unwrap();
            assert_eq!(parse_duration(&v.to_string()).unwrap(), v, "{s} -> {v}");
        }
        assert_eq!(parse_duration("90s").unwrap().to_string(), "1m30s");
        assert_eq!(parse_duration("0").unwrap().to_string(), "0s");
        for s in ["512KB", "1MiB", "2MB", "100B", "1500"] {
            let v = parse_size(s).unwrap();
            assert_eq!(parse_size(&v.to_string()).unwrap(), v, "{s} -> {v}");
        }
        assert_eq!(parse_size("1MiB").unwrap().to_string(), "1MiB");
    }

    #[test]
    fn data_rates() {
        let r = |s: &str| parse_data_rate(s).unwrap();
        assert_eq!(r("20MB/s").bytes_per_s(), 20_000_000.0);
        assert_eq!(r("1.5GB/h").bytes_per_s(), 1_500_000_000.0 / 3600.0);
        assert_eq!(r("500GB/day").bytes_per_s(), 500e9 / 86_400.0);
        assert_eq!(r("500GB/d"), r("500GB/day"));
        assert_eq!(r("60KiB/min").bytes_per_s(), 1024.0);
        assert_eq!(r("60KiB/m"), r("60KiB/min"));
        assert_eq!(r(" 2 MB / s ").bytes_per_s(), 2e6);
        for s in [
            "20MB/s",
            "1.5GB/h",
            "500GB/day",
            "60KiB/min",
            "100B/s",
            "1MiB/s",
        ] {
            let v = r(s);
            assert_eq!(r(&v.to_string()), v, "{s} -> {v}");
        }
        assert_eq!(r("500GB/day").to_string(), "500GB/day");
        assert_eq!(r("1MiB/s").to_string(), "1MiB/s");
        assert_eq!(r("1.5GB/h").to_string(), "1500MB/h");
        for s in [
            "",
            "20MB",
            "20/s",
            "MB/s",
            "20MB/week",
            "20mb/s",
            "20MB/s/s",
            "-1MB/s",
            "1.2.3MB/s",
        ] {
            let e = parse_data_rate(s).unwrap_err();
            assert!(e.contains("not a data rate"), "{s}: {e}");
        }
    }
}
