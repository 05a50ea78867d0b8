//! Wall-clock formatting without a date library: RFC 3339 timestamps with milliseconds for
//! trajectory events and the `yyyymmdd-hhmmss` stamp of default trajectory file names, both
//! in UTC (trajectories, the task board's timestamps and backups).

use std::time::{SystemTime, UNIX_EPOCH};

/// The civil date (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's
/// algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

struct Parts {
    year: i64,
    month: u32,
    day: u32,
    hour: u64,
    minute: u64,
    second: u64,
    millis: u32,
}

fn parts(time: SystemTime) -> Parts {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil(i64::try_from(secs / 86_400).unwrap_or(0));
    let rest = secs % 86_400;
    Parts {
        year,
        month,
        day,
        hour: rest / 3_600,
        minute: rest % 3_600 / 60,
        second: rest % 60,
        millis: since.subsec_millis(),
    }
}

/// `2026-03-01T12:00:00.123Z`.
pub fn rfc3339_millis(time: SystemTime) -> String {
    let p = parts(time);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", p.year, p.month, p.day, p.hour, p.minute, p.second, p.millis)
}

/// `20260301-120000`.
pub fn file_stamp(time: SystemTime) -> String {
    let p = parts(time);
    format!("{:04}{:02}{:02}-{:02}{:02}{:02}", p.year, p.month, p.day, p.hour, p.minute, p.second)
}

/// `2026-03-01`.
pub fn date(time: SystemTime) -> String {
    let p = parts(time);
    format!("{:04}-{:02}-{:02}", p.year, p.month, p.day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants_format() {
        let t = UNIX_EPOCH + Duration::from_millis(1_772_366_400_123);
        assert_eq!(rfc3339_millis(t), "2026-03-01T12:00:00.123Z");
        assert_eq!(file_stamp(t), "20260301-120000");
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(date(leap), "2000-02-29");
    }
}
