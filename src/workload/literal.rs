//! A driver value as the CQL literal that writes it: what `cqlbench profile` shows of a sample
//! row, and what a verification mismatch names, so a value can be pasted into `cqlsh`.

use std::fmt::Write as _;

use chrono::{DateTime, NaiveDate, NaiveTime};
use num_bigint::BigInt;
use scylla::value::{CqlDuration, CqlValue};

/// `v` as a CQL literal: text `'it''s'`, blobs `0x0aff`, numbers (varints and decimals in
/// full), uuids bare, timestamps `'2022-02-10T21:45:48.994Z'`, dates `'2022-10-05'`, times
/// `'09:44:08.516708169'`, durations `1mo2d3ns`, inet `'10.0.0.1'`, `true`/`false`,
/// lists `[..]`, sets `{..}`, maps `{k: v}`, tuples `(..)`, UDTs `{field: v}`, `null`.
/// A value of a non-text type the database holds as empty bytes has no literal: `empty`.
pub fn cql_literal(v: &CqlValue) -> String {
    let mut o = String::new();
    write_literal(&mut o, Some(v));
    o
}

/// [`cql_literal`] cut to about `max` characters for a line of text: a longer literal keeps
/// its start, then `…` and the value's size (`'abc…' (26 chars)`, `0x0aff…' (51 bytes)`).
pub fn cql_literal_short(v: &CqlValue, max: usize) -> String {
    let full = cql_literal(v);
    let n = full.chars().count();
    if n <= max {
        return full;
    }
    let head: String = full.chars().take(max.saturating_sub(1).max(1)).collect();
    let size = match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => format!("{} chars", s.chars().count()),
        CqlValue::Blob(b) => format!("{} bytes", b.len()),
        CqlValue::List(x) | CqlValue::Set(x) => format!("{} items", x.len()),
        CqlValue::Map(x) => format!("{} entries", x.len()),
        _ => format!("{n} chars"),
    };
    format!("{head}… ({size})")
}

fn write_literal(o: &mut String, v: Option<&CqlValue>) {
    let Some(v) = v else {
        o.push_str("null");
        return;
    };
    match v {
        // Where the driver's `Display` writes the literal we want (quoted text with '' doubled,
        // lower-case hex blobs, integers, uuids, quoted inet), it writes it.
        CqlValue::Ascii(_)
        | CqlValue::Text(_)
        | CqlValue::Blob(_)
        | CqlValue::Boolean(_)
        | CqlValue::Counter(_)
        | CqlValue::TinyInt(_)
        | CqlValue::SmallInt(_)
        | CqlValue::Int(_)
        | CqlValue::BigInt(_) => {
            let _ = write!(o, "{v}");
        }
        CqlValue::Float(x) => o.push_str(&float(f64::from(*x), x.to_string())),
        CqlValue::Double(x) => o.push_str(&float(*x, x.to_string())),
        CqlValue::Varint(n) => {
            let _ = write!(
                o,
                "{}",
                BigInt::from_signed_bytes_be(n.as_signed_bytes_be_slice())
            );
        }
        CqlValue::Decimal(d) => {
            let (bytes, scale) = d.as_signed_be_bytes_slice_and_exponent();
            o.push_str(&decimal(&BigInt::from_signed_bytes_be(bytes), scale));
        }
        CqlValue::Uuid(_) | CqlValue::Timeuuid(_) | CqlValue::Inet(_) => {
            let _ = write!(o, "{v}");
        }
        CqlValue::Timestamp(t) => match DateTime::from_timestamp_millis(t.0) {
            Some(d) => {
                let _ = write!(o, "'{}'", d.format("%Y-%m-%dT%H:%M:%S%.3fZ"));
            }
            None => {
                let _ = write!(o, "{}", t.0);
            }
        },
        CqlValue::Date(d) => {
            let days = i64::from(d.0) - (1i64 << 31);
            match i32::try_from(days + 719_163)
                .ok()
                .and_then(NaiveDate::from_num_days_from_ce_opt)
            {
                Some(date) => {
                    let _ = write!(o, "'{date}'");
                }
                None => {
                    let _ = write!(o, "{}", d.0);
                }
            }
        }
        CqlValue::Time(t) => {
            let (s, ns) = (t.0.div_euclid(1_000_000_000), t.0.rem_euclid(1_000_000_000));
            match u32::try_from(s)
                .ok()
                .and_then(|s| NaiveTime::from_num_seconds_from_midnight_opt(s, ns as u32))
            {
                Some(time) => {
                    let _ = write!(o, "'{}'", time.format("%H:%M:%S%.9f"));
                }
                None => {
                    let _ = write!(o, "{}", t.0);
                }
            }
        }
        CqlValue::Duration(d) => o.push_str(&duration(d)),
        CqlValue::Empty => o.push_str("empty"),
        CqlValue::List(items) => sequence(o, '[', ']', items.iter().map(Some)),
        CqlValue::Set(items) => sequence(o, '{', '}', items.iter().map(Some)),
        CqlValue::Tuple(items) => sequence(o, '(', ')', items.iter().map(Option::as_ref)),
        CqlValue::Map(pairs) => {
            o.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                write_literal(o, Some(k));
                o.push_str(": ");
                write_literal(o, Some(v));
            }
            o.push('}');
        }
        CqlValue::UserDefinedType { fields, .. } => {
            o.push('{');
            for (i, (name, v)) in fields.iter().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                o.push_str(&identifier(name));
                o.push_str(": ");
                write_literal(o, v.as_ref());
            }
            o.push('}');
        }
        // `CqlValue` is non-exhaustive: a type a later driver adds is shown as it debugs.
        #[allow(unreachable_patterns)]
        other => {
            let _ = write!(o, "{other:?}");
        }
    }
}

fn sequence<'a>(
    o: &mut String,
    open: char,
    close: char,
    items: impl Iterator<Item = Option<&'a CqlValue>>,
) {
    o.push(open);
    for (i, v) in items.enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        write_literal(o, v);
    }
    o.push(close);
}

/// CQL's `NaN` and `Infinity` where Rust writes `NaN` and `inf`.
fn float(x: f64, shown: String) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        shown
    }
}

/// The unscaled value `n` over 10^`scale`, written out in full (`-12.345`, `1200`).
fn decimal(n: &BigInt, scale: i32) -> String {
    let digits = n.magnitude().to_string();
    let sign = if n.sign() == num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    if scale <= 0 {
        let zeros = if n.magnitude().bits() == 0 {
            0
        } else {
            scale.unsigned_abs() as usize
        };
        return format!("{sign}{digits}{}", "0".repeat(zeros));
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// A duration literal: `1mo2d3ns`, `-1d`, `0s`.
fn duration(d: &CqlDuration) -> String {
    let negative = d.months < 0 || d.days < 0 || d.nanoseconds < 0;
    let mut o = String::from(if negative { "-" } else { "" });
    for (n, unit) in [
        (i64::from(d.months).unsigned_abs(), "mo"),
        (i64::from(d.days).unsigned_abs(), "d"),
        (d.nanoseconds.unsigned_abs(), "ns"),
    ] {
        if n > 0 {
            let _ = write!(o, "{n}{unit}");
        }
    }
    if o.is_empty() || o == "-" {
        return "0s".into();
    }
    o
}

/// A field name as CQL reads it: bare when lower-case, else double-quoted.
fn identifier(name: &str) -> String {
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use scylla::value::{
        Counter, CqlDate, CqlDecimal, CqlTime, CqlTimestamp, CqlTimeuuid, CqlVarint,
    };

    use super::*;

    fn lit(v: CqlValue) -> String {
        cql_literal(&v)
    }

    #[test]
    fn long_literals_are_cut_with_their_size() {
        assert_eq!(cql_literal_short(&CqlValue::Text("abc".into()), 5), "'abc'");
        assert_eq!(
            cql_literal_short(&CqlValue::Text("abcdefgh".into()), 5),
            "'abc… (8 chars)"
        );
        assert_eq!(
            cql_literal_short(&CqlValue::Blob(vec![1; 51]), 7),
            "0x0101… (51 bytes)"
        );
        let list = CqlValue::List((0..100).map(CqlValue::Int).collect());
        assert_eq!(cql_literal_short(&list, 6), "[0, 1… (100 items)");
    }

    #[test]
    fn text_is_quoted_with_quotes_doubled() {
        assert_eq!(lit(CqlValue::Text("it's".into())), "'it''s'");
        assert_eq!(lit(CqlValue::Ascii("a".into())), "'a'");
        assert_eq!(lit(CqlValue::Text(String::new())), "''");
    }

    #[test]
    fn blobs_are_hex() {
        assert_eq!(lit(CqlValue::Blob(vec![0x0a, 0xff, 0])), "0x0aff00");
        assert_eq!(lit(CqlValue::Blob(vec![])), "0x");
    }

    #[test]
    fn integers_and_counters_are_numbers() {
        assert_eq!(lit(CqlValue::TinyInt(-22)), "-22");
        assert_eq!(lit(CqlValue::SmallInt(32634)), "32634");
        assert_eq!(lit(CqlValue::Int(i32::MIN)), "-2147483648");
        assert_eq!(lit(CqlValue::BigInt(i64::MAX)), "9223372036854775807");
        assert_eq!(lit(CqlValue::Counter(Counter(7))), "7");
    }

    #[test]
    fn floats_are_numbers_nan_and_infinity() {
        assert_eq!(lit(CqlValue::Double(476467.985)), "476467.985");
        assert_eq!(lit(CqlValue::Float(5102.26)), "5102.26");
        assert_eq!(lit(CqlValue::Double(f64::NAN)), "NaN");
        assert_eq!(lit(CqlValue::Float(f32::NEG_INFINITY)), "-Infinity");
        assert_eq!(lit(CqlValue::Double(f64::INFINITY)), "Infinity");
    }

    #[test]
    fn varints_are_whole_numbers_of_any_size() {
        let v = |b: &[u8]| {
            lit(CqlValue::Varint(CqlVarint::from_signed_bytes_be(
                b.to_vec(),
            )))
        };
        assert_eq!(v(&[0x01, 0x00]), "256");
        assert_eq!(v(&[0xff]), "-1");
        assert_eq!(v(&[]), "0");
        // 2^72: past any machine integer.
        assert_eq!(v(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]), "4722366482869645213696");
    }

    #[test]
    fn decimals_place_the_point_by_their_scale() {
        let d = |b: &[u8], s: i32| {
            lit(CqlValue::Decimal(
                CqlDecimal::from_signed_be_bytes_and_exponent(b.to_vec(), s),
            ))
        };
        assert_eq!(d(&[0x30, 0x39], 3), "12.345");
        assert_eq!(d(&[0xcf, 0xc7], 3), "-12.345");
        assert_eq!(d(&[0x05], 3), "0.005");
        assert_eq!(d(&[0xfb], 1), "-0.5");
        assert_eq!(d(&[0x0c], -2), "1200");
        assert_eq!(d(&[0x0c], 0), "12");
        assert_eq!(d(&[], -3), "0");
    }

    #[test]
    fn uuids_are_bare() {
        let u = uuid::Uuid::parse_str("6d8df5d6-57b4-4121-87eb-135faf9cecf5").unwrap();
        assert_eq!(
            lit(CqlValue::Uuid(u)),
            "6d8df5d6-57b4-4121-87eb-135faf9cecf5"
        );
        let t = uuid::Uuid::parse_str("6450dfe8-20c1-1b2c-b1d2-92dfd43ba15c").unwrap();
        assert_eq!(
            lit(CqlValue::Timeuuid(CqlTimeuuid::from(t))),
            "6450dfe8-20c1-1b2c-b1d2-92dfd43ba15c"
        );
    }

    #[test]
    fn timestamps_are_iso_utc_with_milliseconds() {
        assert_eq!(
            lit(CqlValue::Timestamp(CqlTimestamp(1_644_529_548_994))),
            "'2022-02-10T21:45:48.994Z'"
        );
        assert_eq!(
            lit(CqlValue::Timestamp(CqlTimestamp(-1))),
            "'1969-12-31T23:59:59.999Z'"
        );
        // Past what a calendar date holds: the milliseconds.
        assert_eq!(
            lit(CqlValue::Timestamp(CqlTimestamp(i64::MAX))),
            i64::MAX.to_string()
        );
    }

    #[test]
    fn dates_are_iso_days() {
        let epoch = 1u32 << 31;
        assert_eq!(lit(CqlValue::Date(CqlDate(epoch))), "'1970-01-01'");
        assert_eq!(lit(CqlValue::Date(CqlDate(epoch + 19270))), "'2022-10-05'");
        assert_eq!(lit(CqlValue::Date(CqlDate(epoch - 1))), "'1969-12-31'");
        // Outside chrono's calendar: the raw day number.
        assert_eq!(lit(CqlValue::Date(CqlDate(0))), "0");
    }

    #[test]
    fn times_are_clock_times_with_nanoseconds() {
        assert_eq!(
            lit(CqlValue::Time(CqlTime(35_048_516_708_169))),
            "'09:44:08.516708169'"
        );
        assert_eq!(lit(CqlValue::Time(CqlTime(0))), "'00:00:00.000000000'");
        assert_eq!(lit(CqlValue::Time(CqlTime(-1))), "-1");
    }

    #[test]
    fn durations_use_cql_units() {
        let d = |months, days, nanoseconds| {
            lit(CqlValue::Duration(CqlDuration {
                months,
                days,
                nanoseconds,
            }))
        };
        assert_eq!(d(1, 2, 3), "1mo2d3ns");
        assert_eq!(d(0, -1, 0), "-1d");
        assert_eq!(d(0, 0, 0), "0s");
    }

    #[test]
    fn inet_booleans_empty_and_null() {
        let ip: IpAddr = "254.131.106.110".parse().unwrap();
        assert_eq!(lit(CqlValue::Inet(ip)), "'254.131.106.110'");
        let ip6: IpAddr = "::1".parse().unwrap();
        assert_eq!(lit(CqlValue::Inet(ip6)), "'::1'");
        assert_eq!(lit(CqlValue::Boolean(true)), "true");
        assert_eq!(lit(CqlValue::Boolean(false)), "false");
        assert_eq!(lit(CqlValue::Empty), "empty");
        let mut o = String::new();
        write_literal(&mut o, None);
        assert_eq!(o, "null");
    }

    #[test]
    fn collections_nest() {
        assert_eq!(
            lit(CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(2)])),
            "[1, 2]"
        );
        assert_eq!(lit(CqlValue::List(vec![])), "[]");
        assert_eq!(
            lit(CqlValue::Set(vec![
                CqlValue::Text("a".into()),
                CqlValue::Text("b'c".into())
            ])),
            "{'a', 'b''c'}"
        );
        assert_eq!(
            lit(CqlValue::Map(vec![
                (CqlValue::Int(-2), CqlValue::Text("x".into())),
                (
                    CqlValue::Int(3),
                    CqlValue::List(vec![CqlValue::Boolean(true)])
                ),
            ])),
            "{-2: 'x', 3: [true]}"
        );
    }

    #[test]
    fn tuples_and_udts() {
        assert_eq!(
            lit(CqlValue::Tuple(vec![
                Some(CqlValue::Int(1)),
                None,
                Some(CqlValue::Text("t".into()))
            ])),
            "(1, null, 't')"
        );
        assert_eq!(
            lit(CqlValue::UserDefinedType {
                keyspace: "ks".into(),
                name: "address".into(),
                fields: vec![
                    ("street".into(), Some(CqlValue::Text("Main".into()))),
                    ("Zip".into(), None),
                ],
            }),
            "{street: 'Main', \"Zip\": null}"
        );
    }
}
