//! The catalogue's field types, as serde `deserialize_with` readers: each takes one value and
//! refuses it in the words the catalogue's errors use ("expected a positive number"), so that
//! an entry's struct, derived, says what its fields are and how each is checked.

use serde::de::Error;
use serde::{Deserialize, Deserializer};

use crate::yaml::Value;

fn number<'de, D: Deserializer<'de>>(
    d: D,
    ok: fn(f64) -> bool,
    expected: &'static str,
) -> Result<f64, D::Error> {
    Value::deserialize(d)?
        .as_f64()
        .filter(|n| n.is_finite() && ok(*n))
        .ok_or_else(|| D::Error::custom(expected))
}

/// A number above 0.
pub fn pos<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, |n| n > 0.0, "expected a positive number")
}

/// [`pos`], when given.
pub fn opt_pos<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    pos(d).map(Some)
}

/// A number of at least 0.
pub fn nonneg<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(d, |n| n >= 0.0, "expected a number of at least 0")
}

/// [`nonneg`], when given.
pub fn opt_nonneg<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    nonneg(d).map(Some)
}

/// A fraction from 0 up to (not including) 1.
pub fn fraction<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(
        d,
        |n| (0.0..1.0).contains(&n),
        "expected a fraction from 0 up to 1",
    )
}

/// [`fraction`], when given.
pub fn opt_fraction<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    fraction(d).map(Some)
}

/// A whole number above 0.
pub fn pos_int<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Value::deserialize(d)?
        .as_u64()
        .filter(|n| *n > 0)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| D::Error::custom("expected a positive integer"))
}

/// Text that is not blank.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(D::Error::custom("expected a non-empty string")),
    }
}

/// [`text`], when given.
pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    text(d).map(Some)
}

/// Text that is one of `allowed`.
fn one_of<'de, D: Deserializer<'de>>(
    d: D,
    allowed: &[&str],
    expected: &'static str,
) -> Result<String, D::Error> {
    let t = text(d)?;
    if allowed.contains(&t.as_str()) {
        Ok(t)
    } else {
        Err(D::Error::custom(expected))
    }
}

/// A provider the catalogue prices.
pub fn provider<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    one_of(d, &["aws", "gcp", "azure"], "expected aws, gcp or azure")
}

/// A reservation's term.
pub fn term<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    one_of(d, &["1y", "3y"], "expected 1y or 3y")
}

/// An instance's kind of local disk, when given.
pub fn opt_disk_kind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    one_of(d, &["nvme", "ssd", "hdd"], "expected nvme, ssd or hdd").map(Some)
}

/// When a price was in force: `YYYY-MM` or `YYYY-MM-DD`.
pub fn date<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let t = text(d)?;
    if is_date(&t) {
        Ok(t)
    } else {
        Err(D::Error::custom("expected YYYY-MM or YYYY-MM-DD"))
    }
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: usize| p.len() == n && p.chars().all(|c| c.is_ascii_digit());
    let month_ok = |p: &str| digits(p, 2) && (1..=12).contains(&p.parse::<u32>().unwrap_or(0));
    match parts.as_slice() {
        [y, m] => digits(y, 4) && month_ok(m),
        [y, m, d] => digits(y, 4) && month_ok(m) && digits(d, 2),
        _ => false,
    }
}
