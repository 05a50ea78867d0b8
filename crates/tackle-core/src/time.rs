//! Wall-clock formatting without a date library, the one place of the workspace's date
//! arithmetic: RFC 3339 timestamps with milliseconds for trajectory events and the task
//! board (which also reads its own back, [`parse_rfc3339_millis`]), and the `yyyymmdd-hhmmss`
//! stamp of default trajectory file names and backups, all in UTC.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// The day count since 1970-01-01 of a civil date, the inverse of [`civil`] (Howard
/// Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

/// Reads back exactly [`rfc3339_millis`]'s form (`2026-03-01T12:00:00.123Z`); anything
/// else, a date that does not exist (`2026-02-30`) or an instant before 1970 is `None`.
pub fn parse_rfc3339_millis(text: &str) -> Option<SystemTime> {
    let bytes = text.as_bytes();
    if bytes.len() != 24 || !text.is_ascii() {
        return None;
    }
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')];
    if separators.iter().any(|&(at, byte)| bytes[at] != byte) {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        let digits = &text[from..to];
        if digits.bytes().all(|b| b.is_ascii_digit()) { digits.parse().ok() } else { None }
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second, millis) = (number(11, 13)?, number(14, 16)?, number(17, 19)?, number(20, 23)?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    // A day past the month's end comes back as another date: refused.
    if !(1..=12).contains(&month) || civil(days) != (i64::from(year), month, day) {
        return None;
    }
    let seconds = days * 86_400 + i64::from(hour * 3_600 + minute * 60 + second);
    let since = Duration::from_secs(u64::try_from(seconds).ok()?) + Duration::from_millis(u64::from(millis));
    UNIX_EPOCH.checked_add(since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_format() {
        let t = UNIX_EPOCH + Duration::from_millis(1_772_366_400_123);
        assert_eq!(rfc3339_millis(t), "2026-03-01T12:00:00.123Z");
        assert_eq!(file_stamp(t), "20260301-120000");
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(date(leap), "2000-02-29");
    }

    #[test]
    fn stamps_read_back_to_the_millisecond() {
        // Every day of 1970..2100 at a few times of day, leap days and century years included.
        for day in 0..(131 * 366_u64) {
            for millis in [0, 1, 43_200_123, 86_399_999] {
                let t = UNIX_EPOCH + Duration::from_millis(day * 86_400_000 + millis);
                assert_eq!(parse_rfc3339_millis(&rfc3339_millis(t)), Some(t), "{}", rfc3339_millis(t));
            }
        }
        assert_eq!(
            parse_rfc3339_millis("2000-02-29T23:59:59.999Z"),
            Some(UNIX_EPOCH + Duration::from_millis(951_868_799_999))
        );
    }

    #[test]
    fn anything_but_the_exact_form_is_refused() {
        for text in [
            "",
            "2026-03-01T12:00:00Z",
            "2026-03-01T12:00:00.123",
            "2026-03-01 12:00:00.123Z",
            "2026-03-01T12:00:00.123+00:00",
            "2026-03-01T12:00:00.1234Z",
            "+026-03-01T12:00:00.123Z",
            "-001-03-01T12:00:00.123Z",
            "2026-3-01T12:00:00.123Z ",
            "2026-03-01T12:00:0+.123Z",
            "2026-13-01T12:00:00.123Z",
            "2026-00-01T12:00:00.123Z",
            "2026-02-29T12:00:00.123Z",
            "2026-04-31T12:00:00.123Z",
            "2026-03-00T12:00:00.123Z",
            "2026-03-01T24:00:00.123Z",
            "2026-03-01T12:60:00.123Z",
            "2026-03-01T12:00:60.123Z",
            "1969-12-31T23:59:59.999Z",
            "2026-03-01T12:00:00.12é",
            "２026-03-01T12:00:00.12Z",
        ] {
            assert_eq!(parse_rfc3339_millis(text), None, "{text:?}");
        }
    }
}
