//! # Dates
//!
//! Unix timestamps as UTC dates for people (`YYYY-MM-DD HH:MM`), without a date library: the
//! days-to-civil-date conversion of the proleptic Gregorian calendar.
//!
//! ## References
//! - H. Hinnant, *chrono-Compatible Low-Level Date Algorithms*, `civil_from_days`
//!   (<https://howardhinnant.github.io/date_algorithms.html>).

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM` in UTC.
pub(crate) fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// The (year, month, day) of the day `days` after 1970-01-01.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        // A leap day of a century leap year, seconds dropped.
        assert_eq!(utc(951_827_696), "2000-02-29 12:34");
        // As `date -u -d @1795462807` prints it, seconds dropped; 39 days on crosses a year.
        assert_eq!(utc(1_795_462_807), "2026-11-23 19:40");
        assert_eq!(utc(1_795_462_807 + 86_400 * 39), "2027-01-01 19:40");
    }
}
