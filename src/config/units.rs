//! Units in config values: durations (`250ms`, `90s`, `5m`, `1h30m`, `14d`) and byte sizes
//! (`512KB`, `1MiB`, `2MB`). Decimal prefixes are powers of 1000 (KB = 1000 B), binary prefixes
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
}
