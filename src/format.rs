//! Numbers, money and times written for people: one place for every stage that formats them
//! (a leaf: it imports nothing of the crate).

use std::time::{Duration, UNIX_EPOCH};

/// `v` with `decimals` decimals and its whole part grouped by thousands (`1234567.891`, 2 →
/// `1,234,567.89`).
pub fn grouped(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut out = String::with_capacity(s.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    // "-0" is not a number a person writes.
    if out
        .strip_prefix('-')
        .is_some_and(|d| d.chars().all(|c| matches!(c, '0' | '.' | ',')))
    {
        out.remove(0);
    }
    out
}

/// `1234567.8` → `1,234,568` (rounded to a whole number, thousands separated).
pub fn thousands(v: f64) -> String {
    grouped(v, 0)
}

/// A table cell: [`grouped`], or `-` for no value.
pub fn cell(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| grouped(v, decimals))
}

/// A unit price without its `$`: at least two decimals, more when the price has them
/// (`0.1` → `0.10`, `0.000164` → `0.000164`).
pub fn rate(v: f64) -> String {
    let cents = v * 100.0;
    if (cents - cents.round()).abs() < 1e-9 {
        format!("{v:.2}")
    } else {
        format!("{v}")
    }
}

/// `1234.5` → `$1,234.50`.
pub fn usd(v: f64) -> String {
    format!("${}", grouped((v * 100.0).round() / 100.0, 2))
}

/// `2026-11-22T02:30:05Z` for a Unix time in seconds (UTC).
pub fn rfc3339_utc(unix_s: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(unix_s)).to_string()
}

/// The known name closest to a mistyped `word`, when close enough to be what was meant
/// (Jaro-Winkler similarity of at least 0.8, as `concurency` is to `concurrency`).
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(word, k), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// `"; did you mean `concurrency`?"` after an unknown `word`, or nothing.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, known).map_or_else(String::new, |k| format!("; did you mean `{k}`?"))
}

/// Compact form for file names: `20261122T023005Z`.
pub fn compact_utc(unix_s: u64) -> String {
    rfc3339_utc(unix_s).replace(['-', ':'], "")
}

/// A table for people, whichever way it is shown (terminal, Markdown, CSV, HTML): a title,
/// column headers (the first column holds the row labels) and rows of cells already
/// formatted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns holding text rather than numbers, aligned left (the first column always is).
    pub text_columns: Vec<usize>,
}

impl Table {
    /// The terminal form: its title, then the rows aligned (labels and text left, numbers
    /// right), then a blank line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // An empty header: rows only (an aligned block of labelled lines).
        let header = (!self.header.is_empty()).then_some(&self.header);
        let cols = (self.rows.iter().chain(header))
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r.get(c).map_or(0, |v| v.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        for row in header.into_iter().chain(&self.rows) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    let w = width.get(c).copied().unwrap_or(0);
                    if c == 0 || self.text_columns.contains(&c) {
                        format!("{v:<w$}")
                    } else {
                        format!("{v:>w$}")
                    }
                })
                .collect();
            out.push_str("  ");
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_name_is_suggested_and_a_far_one_is_not() {
        let known = ["rows", "concurrency", "rate", "cluster", "duration"];
        assert_eq!(closest("concurency", known), Some("concurrency"));
        assert_eq!(closest("clustr", known), Some("cluster"));
        assert_eq!(closest("durtion", known), Some("duration"));
        assert_eq!(closest("xyz", known), None);
        assert_eq!(closest("flux-capacitor", known), None);
        assert_eq!(
            did_you_mean("rwos", known),
            "; did you mean `rows`?".to_string()
        );
        assert_eq!(did_you_mean("zzz", known), "");
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(-0.2), "0");
        assert_eq!(grouped(1234567.891, 2), "1,234,567.89");
        assert_eq!(grouped(-1234.5, 1), "-1,234.5");
        assert_eq!(cell(None, 2), "-");
        assert_eq!(cell(Some(12.345), 1), "12.3");
        assert_eq!(usd(777.52), "$777.52");
        assert_eq!(usd(354404.4), "$354,404.40");
        assert_eq!(usd(0.5), "$0.50");
        assert_eq!(
            (rate(0.1), rate(0.000164), rate(3.0)),
            ("0.10".into(), "0.000164".into(), "3.00".into())
        );
    }

    #[test]
    fn formats_utc_timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_314_605), "2026-11-22T02:30:05Z");
        assert_eq!(compact_utc(1_795_314_605), "20261122T023005Z");
    }
}
