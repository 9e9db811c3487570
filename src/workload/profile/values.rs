//! A value of every supported CQL type as a pure function of a seed (and, for text, blobs and
//! collections, a size distribution): the same seed gives the same value in any process.

use std::net::{IpAddr, Ipv4Addr};

use scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue, CqlVarint,
};

use super::cql::CqlType;
use super::dist::Dist;
use crate::workload::data::{fill, mix, mix2};
use crate::workload::shapes;

/// Collections hold at most this many elements whatever their size distribution says.
pub const MAX_ELEMENTS: i64 = 1000;
/// 2020-01-01T00:00:00Z in ms: generated timestamps fall in the five years after it.
const EPOCH_MS: i64 = 1_577_836_800_000;
const FIVE_YEARS_MS: u64 = 5 * 365 * 86_400_000;

/// The shortest two's-complement big-endian bytes of `v` (as the server returns varints).
fn minimal_be(v: i64) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 7
        && ((b[start] == 0 && b[start + 1] & 0x80 == 0)
            || (b[start] == 0xFF && b[start + 1] & 0x80 != 0))
    {
        start += 1;
    }
    b[start..].to_vec()
}

/// The value of type `ty` for `seed`; `size` gives text and blob lengths and collection
/// element counts.
pub fn value(ty: &CqlType, seed: u64, size: &Dist) -> CqlValue {
    let h = mix(seed);
    let len = |s: u64| size.sample(s, s).clamp(0, i64::from(u32::MAX)) as usize;
    match ty {
        CqlType::Text => CqlValue::Text(shapes::text(h, len(seed))),
        CqlType::Ascii => CqlValue::Ascii(shapes::text(h, len(seed))),
        CqlType::Blob => {
            let mut b = vec![0u8; len(seed)];
            fill(h, &mut b);
            CqlValue::Blob(b)
        }
        CqlType::TinyInt => CqlValue::TinyInt(h as i8),
        CqlType::SmallInt => CqlValue::SmallInt(h as i16),
        CqlType::Int => CqlValue::Int(h as i32),
        CqlType::BigInt => CqlValue::BigInt(h as i64),
        CqlType::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(minimal_be(h as i64))),
        // Hundredths and thousandths in a ±10^4 / ±10^6 range.
        CqlType::Float => CqlValue::Float((h % 2_000_000) as f32 / 100.0 - 10_000.0),
        CqlType::Double => CqlValue::Double((h % 2_000_000_000) as f64 / 1000.0 - 1_000_000.0),
        CqlType::Decimal => CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
            minimal_be((h % 10_000_000_000) as i64 - 5_000_000_000),
            2,
        )),
        CqlType::Uuid => CqlValue::Uuid(shapes::uuid(seed)),
        CqlType::TimeUuid => {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&h.to_be_bytes());
            b[8..].copy_from_slice(&mix2(seed).to_be_bytes());
            let u = uuid::Builder::from_bytes(b)
                .with_version(uuid::Version::Mac)
                .with_variant(uuid::Variant::RFC4122)
                .into_uuid();
            CqlValue::Timeuuid(CqlTimeuuid::from(u))
        }
        CqlType::Timestamp => {
            CqlValue::Timestamp(CqlTimestamp(EPOCH_MS + (h % FIVE_YEARS_MS) as i64))
        }
        // Days since 1970 with 2^31 as the epoch, as CQL encodes them: 2020 to 2025.
        CqlType::Date => CqlValue::Date(CqlDate((1u32 << 31) + 18_262 + (h % 1826) as u32)),
        CqlType::Time => CqlValue::Time(CqlTime((h % 86_400_000_000_000) as i64)),
        CqlType::Inet => CqlValue::Inet(IpAddr::V4(Ipv4Addr::from((h >> 32) as u32))),
        CqlType::Boolean => CqlValue::Boolean(h & 1 == 1),
        // What an increment adds.
        CqlType::Counter => CqlValue::Counter(Counter(1 + (h % 10) as i64)),
        CqlType::List(t) => CqlValue::List(elements(t, seed, size)),
        CqlType::Set(t) => {
            let mut v = elements(t, seed, size);
            v.sort_by_key(|e| format!("{e:?}"));
            v.dedup();
            CqlValue::Set(v)
        }
        CqlType::Map(k, v) => {
            let keys = elements(k, seed, size);
            let mut pairs: Vec<(CqlValue, CqlValue)> = keys
                .into_iter()
                .enumerate()
                .map(|(i, key)| (key, value(v, mix2(seed ^ i as u64), &element_size())))
                .collect();
            pairs.sort_by_key(|(k, _)| format!("{k:?}"));
            pairs.dedup_by(|a, b| a.0 == b.0);
            CqlValue::Map(pairs)
        }
    }
}

/// Elements inside collections: text and blobs of 4 to 8 (cassandra-stress's default size).
fn element_size() -> Dist {
    "uniform(4..8)".parse().expect("a valid distribution")
}

fn elements(t: &CqlType, seed: u64, size: &Dist) -> Vec<CqlValue> {
    let n = size.sample(seed, seed).clamp(0, MAX_ELEMENTS) as u64;
    let inner = element_size();
    (0..n)
        .map(|i| value(t, mix(seed ^ (i + 1).wrapping_mul(0x9E37_79B9)), &inner))
        .collect()
}

/// Bytes a value occupies on the wire (for the sizes `profile` prints).
pub fn wire_bytes(v: &CqlValue) -> usize {
    match v {
        CqlValue::Text(s) | CqlValue::Ascii(s) => s.len(),
        CqlValue::Blob(b) => b.len(),
        CqlValue::TinyInt(_) | CqlValue::Boolean(_) => 1,
        CqlValue::SmallInt(_) => 2,
        CqlValue::Int(_) | CqlValue::Float(_) | CqlValue::Date(_) => 4,
        CqlValue::Inet(IpAddr::V4(_)) => 4,
        CqlValue::Inet(IpAddr::V6(_)) => 16,
        CqlValue::Varint(v) => v.as_signed_bytes_be_slice().len(),
        CqlValue::Decimal(d) => 4 + d.as_signed_be_bytes_slice_and_exponent().0.len(),
        CqlValue::Uuid(_) | CqlValue::Timeuuid(_) => 16,
        CqlValue::List(v) | CqlValue::Set(v) => {
            4 + v.iter().map(|e| 4 + wire_bytes(e)).sum::<usize>()
        }
        CqlValue::Map(p) => {
            4 + p
                .iter()
                .map(|(k, v)| 8 + wire_bytes(k) + wire_bytes(v))
                .sum::<usize>()
        }
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_type() -> Vec<CqlType> {
        [
            "text",
            "ascii",
            "blob",
            "tinyint",
            "smallint",
            "int",
            "bigint",
            "varint",
            "float",
            "double",
            "decimal",
            "uuid",
            "timeuuid",
            "timestamp",
            "date",
            "time",
            "inet",
            "boolean",
            "counter",
            "list<int>",
            "set<text>",
            "map<text, double>",
            "frozen<list<uuid>>",
        ]
        .iter()
        .map(|t| CqlType::parse(t).unwrap())
        .collect()
    }

    #[test]
    fn every_type_has_a_value_that_is_a_function_of_the_seed() {
        let size: Dist = "uniform(4..8)".parse().unwrap();
        for ty in every_type() {
            let a: Vec<CqlValue> = (0..200).map(|s| value(&ty, s, &size)).collect();
            let b: Vec<CqlValue> = (0..200).map(|s| value(&ty, s, &size)).collect();
            assert_eq!(a, b, "{ty}");
            let mut distinct: Vec<String> = a.iter().map(|v| format!("{v:?}")).collect();
            distinct.sort();
            distinct.dedup();
            let want = if ty == CqlType::Boolean { 2 } else { 10 };
            assert!(distinct.len() >= want, "{ty}: {} distinct", distinct.len());
        }
    }

    #[test]
    fn sizes_follow_the_size_distribution() {
        let size: Dist = "fixed(34)".parse().unwrap();
        for ty in ["text", "blob"] {
            let t = CqlType::parse(ty).unwrap();
            assert!(
                (0..100).all(|s| wire_bytes(&value(&t, s, &size)) == 34),
                "{ty}"
            );
        }
        let size: Dist = "uniform(2..3)".parse().unwrap();
        let l = CqlType::parse("list<int>").unwrap();
        for s in 0..100 {
            let CqlValue::List(v) = value(&l, s, &size) else {
                panic!("a list")
            };
            assert!((2..=3).contains(&v.len()));
        }
    }

    #[test]
    fn values_are_valid_for_their_type() {
        let size: Dist = "uniform(4..8)".parse().unwrap();
        for s in 0..500 {
            let CqlValue::Timeuuid(u) = value(&CqlType::TimeUuid, s, &size) else {
                panic!()
            };
            assert_eq!(u.as_ref().get_version_num(), 1);
            let CqlValue::Varint(v) = value(&CqlType::Varint, s, &size) else {
                panic!()
            };
            assert_eq!(
                v.as_signed_bytes_be_slice(),
                minimal_be(mix(s) as i64).as_slice()
            );
            let CqlValue::Set(e) = value(&CqlType::parse("set<boolean>").unwrap(), s, &size) else {
                panic!()
            };
            assert!(e.len() <= 2, "a set holds distinct elements");
        }
        assert_eq!(minimal_be(0), vec![0]);
        assert_eq!(minimal_be(127), vec![127]);
        assert_eq!(minimal_be(128), vec![0, 128]);
        assert_eq!(minimal_be(-1), vec![0xFF]);
        assert_eq!(minimal_be(-129), vec![0xFF, 0x7F]);
    }
}
