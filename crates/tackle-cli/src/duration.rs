//! Durations on the command line (`tackle run --timeout 30m`): a number with a unit (`ms`,
//! `s`, `m`, `h`), several in a row (`1h30m`), or a bare number of seconds.

use std::time::Duration;

/// The longest duration accepted (a week): past it a typo, not a limit.
const MAX: Duration = Duration::from_secs(7 * 24 * 3600);

/// `text` as a duration; the error says what is accepted.
pub fn parse(text: &str) -> Result<Duration, String> {
    let fail = || format!("'{text}' is not a duration: write e.g. 90s, 30m, 1h30m or 500ms");
    let text = text.trim();
    if text.is_empty() {
        return Err(fail());
    }
    if let Ok(seconds) = text.parse::<u64>() {
        return check(Duration::from_secs(seconds), text);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(fail)?;
        if digits == 0 {
            return Err(fail());
        }
        let number: u64 = rest[..digits].parse().map_err(|_| fail())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let part = match &rest[..unit_len] {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number.saturating_mul(60)),
            "h" => Duration::from_secs(number.saturating_mul(3600)),
            _ => return Err(fail()),
        };
        total = total.saturating_add(part);
        rest = &rest[unit_len..];
    }
    check(total, text)
}

fn check(duration: Duration, text: &str) -> Result<Duration, String> {
    if duration.is_zero() {
        return Err(format!("'{text}': the duration must be more than zero"));
    }
    if duration > MAX {
        return Err(format!("'{text}': the longest duration accepted is 168h"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_combinations() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse(" 2m "), Ok(Duration::from_secs(120)));
    }

    #[test]
    fn malformed_zero_and_huge_are_refused() {
        for bad in ["", "m", "10x", "1.5h", "-5s", "s10", "10 m", "0", "0s", "99999999999999999999h", "169h"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(bad.trim()) || bad.trim().is_empty(), "{bad}: {err}");
        }
    }
}
