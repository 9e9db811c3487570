//! Scenario-file values read through the parsers the command line uses, so a value is refused
//! the same way whether it comes from a flag, a scenario file or a library call: `rate: -1` in
//! a file and `--rate -1` on the command line give the same message.
//!
//! Scalars may be written as YAML strings, numbers or booleans (`rf: 3`, `rate: 35%`); lists
//! as YAML sequences or as the comma-separated text a flag takes.

use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

use serde::de::Error;
use serde::{Deserialize, Deserializer};

/// A YAML scalar, as the text a flag would carry.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    fn text(self) -> String {
        match self {
            Scalar::Text(s) => s,
            Scalar::Int(n) => n.to_string(),
            Scalar::Uint(n) => n.to_string(),
            Scalar::Float(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// One scalar, or a list given as a sequence or as comma-separated text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Items {
    Many(Vec<Scalar>),
    One(Scalar),
}

impl Items {
    fn texts(self) -> Vec<String> {
        match self {
            Items::Many(v) => v.into_iter().map(Scalar::text).collect(),
            Items::One(s) => s
                .text()
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
        }
    }
}

/// Any scalar as text.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Scalar::deserialize(d)
        .map(Scalar::text)
        .map_err(|_| D::Error::custom("expected a single value (text or number)"))
}

/// Any scalar as text (`rf: 3` and `rf: "dc1:3"` alike).
pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    text(d).map(Some)
}

/// A value through its `FromStr`.
pub fn parsed<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    let s = text(d)?;
    s.parse().map_err(D::Error::custom)
}

pub fn opt_parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    parsed(d).map(Some)
}

/// A list of values through their `FromStr`.
pub fn list_parsed<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    Items::deserialize(d)
        .map_err(|_| D::Error::custom("expected a list or comma-separated text"))?
        .texts()
        .iter()
        .map(|s| s.parse().map_err(D::Error::custom))
        .collect()
}

/// One of a command-line enum's values, case-insensitive as on the command line.
pub fn value_enum<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: clap::ValueEnum,
{
    let s = text(d)?;
    T::from_str(&s, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        D::Error::custom(format!(
            "'{s}' is not one of {}",
            names.join(", ").to_lowercase()
        ))
    })
}

pub fn opt_value_enum<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: clap::ValueEnum,
{
    value_enum(d).map(Some)
}

// Deserializers for values whose command-line parser is a function rather than `FromStr`:
// `one!` a value, `opt!` an optional one (through `one!`'s function), `list!` a list.
macro_rules! one {
    ($name:ident, $t:ty, $parse:path) => {
        pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            let s = text(d)?;
            $parse(&s).map_err(D::Error::custom)
        }
    };
}
macro_rules! opt {
    ($name:ident, $one:ident, $t:ty) => {
        pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
            $one(d).map(Some)
        }
    };
}
macro_rules! list {
    ($name:ident, $t:ty, $parse:path) => {
        pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$t>, D::Error> {
            Items::deserialize(d)
                .map_err(|_| D::Error::custom("expected a list or comma-separated text"))?
                .texts()
                .iter()
                .map(|s| $parse(s).map_err(D::Error::custom))
                .collect()
        }
    };
}

one!(duration, Duration, crate::spec::parse_duration);
opt!(opt_duration, duration, Duration);
one!(
    rate_arg,
    crate::spec::load::RateArg,
    crate::spec::load::parse_rate_arg
);
opt!(opt_rate_arg, rate_arg, crate::spec::load::RateArg);
one!(rate, f64, crate::spec::load::parse_rate);
opt!(opt_rate, rate, f64);
list!(hosts, String, crate::spec::workload::parse_host);
one!(keyspace, String, crate::spec::workload::parse_keyspace);
one!(env, String, crate::spec::probe::parse_env);
opt!(opt_env, env, String);
list!(
    latency_bounds,
    crate::result::capacity::LatencyBound,
    crate::step::capacity::parse_latency_bound
);
one!(
    dcs,
    Vec<crate::spec::DcSpec>,
    crate::spec::cluster::parse_dcs
);
opt!(opt_dcs, dcs, Vec<crate::spec::DcSpec>);

/// Plain text items (`prometheus: [a:9500, b:9500]` or `"a:9500,b:9500"`).
pub fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Items::deserialize(d)
        .map(Items::texts)
        .map_err(|_| D::Error::custom("expected a list or comma-separated text"))
}

/// The names of a struct's fields as serde reads them (kebab-case keys).
pub fn field_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Probe(Option<&'static [&'static str]>);
    impl<'de> Deserializer<'de> for &mut Probe {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("field names only"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(Self::Error::custom("field names only"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut p = Probe(None);
    let _ = T::deserialize(&mut p);
    p.0.unwrap_or(&[])
}

/// Splits a map between two structs: the keys `A` has go to `A`, the rest to `B` (which
/// refuses the ones it does not know). Serde cannot combine `flatten` with
/// `deny_unknown_fields`; this keeps unknown keys refused for steps made of two parts.
pub fn split<'de, D, A, B>(d: D) -> Result<(A, B), D::Error>
where
    D: Deserializer<'de>,
    A: serde::de::DeserializeOwned,
    B: serde::de::DeserializeOwned,
{
    let map = crate::yaml::Mapping::deserialize(d)?;
    let a_keys = field_names::<A>();
    let (mut a, mut b) = (crate::yaml::Mapping::new(), crate::yaml::Mapping::new());
    for (k, v) in map {
        if a_keys.contains(&k.as_str()) {
            a.insert(k, v);
        } else {
            b.insert(k, v);
        }
    }
    let a = from_value(crate::yaml::Value::Object(a)).map_err(D::Error::custom)?;
    let b = from_value(crate::yaml::Value::Object(b)).map_err(D::Error::custom)?;
    Ok((a, b))
}

/// serde's "unknown field `concurency`, expected one of `rows`, `concurrency`, …" (or
/// variant) with the closest of the names it lists: "…; did you mean `concurrency`?".
pub fn with_suggestion(message: String) -> String {
    if !(message.starts_with("unknown field `") || message.starts_with("unknown variant `")) {
        return message;
    }
    // The names are the back-quoted parts: the unknown one first, then the expected ones.
    let quoted: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let Some((word, known)) = quoted.split_first() else {
        return message;
    };
    let hint = crate::format::did_you_mean(word, known.iter().copied());
    message + &hint
}

/// Deserializes a YAML value; the error names the key at fault (`rate: '-1' is not a rate`).
pub fn from_value<T: serde::de::DeserializeOwned>(
    v: crate::yaml::Value,
) -> Result<T, crate::error::Invalid> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let inner = with_suggestion(e.into_inner().to_string());
        crate::error::Invalid(if path == "." || path.is_empty() {
            inner
        } else {
            format!("{path}: {inner}")
        })
    })
}
