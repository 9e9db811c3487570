//! Rows shaped like the reference workloads', column for column and in size, as a pure
//! function of the row number (so reads, shards and `verify` agree on every value).
//!
//! - `nb-tabular2`: NoSQLBench's `cql-tabular2` row (reference 000): `part text, clust text`
//!   and eight text fields `data0..data7` whose lengths are drawn uniformly from that
//!   workload's ranges (10 × the Fibonacci numbers, ±10%): 9–11, 18–22, 27–33, 45–55, 72–88,
//!   107–143, 189–231 and 306–374 characters, 865 on average.
//! - `nb-iot`: NoSQLBench's `cql-iot` row (reference 002): `machine_id uuid, sensor_name text,
//!   time timestamp, sensor_value double` (normal, mean 100, sd 5), `station_id uuid` (one of
//!   100 stations) and `data text` of 800–1,200 characters; partitions are (machine, sensor),
//!   clustered by time, newest first.

use scylla::value::CqlTimestamp;
use uuid::Uuid;

use super::data::{below, fill, mix, mix2};

/// `cql-tabular2`'s field lengths: (shortest, longest) of data0..data7.
pub const TABULAR2_FIELDS: [(usize, usize); 8] = [
    (9, 11),
    (18, 22),
    (27, 33),
    (45, 55),
    (72, 88),
    (107, 143),
    (189, 231),
    (306, 374),
];

/// `cql-iot`'s data field: 800 to 1,200 characters.
pub const IOT_DATA: (usize, usize) = (800, 1200);
/// Stations the iot rows' `station_id` takes.
pub const IOT_STATIONS: u64 = 100;
/// Sensor names of an nb-iot machine: a partition is (machine, sensor).
pub const IOT_SENSORS: [&str; 8] = [
    "temperature",
    "humidity",
    "pressure",
    "vibration",
    "voltage",
    "current",
    "rpm",
    "flow",
];
/// The first reading's time (2026-01-01T00:00:00Z, ms) and readings' spacing per machine.
pub const IOT_EPOCH_MS: i64 = 1_767_225_600_000;
pub const IOT_STEP_MS: i64 = 100;

/// Lower-case words and spaces: text like the reference workloads' extracts of lorem ipsum.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz  eaio";

/// `len` characters of text determined by `seed`.
pub fn text(seed: u64, len: usize) -> String {
    let mut b = vec![0u8; len];
    fill(seed, &mut b);
    for c in &mut b {
        *c = ALPHABET[(*c & 31) as usize];
    }
    String::from_utf8(b).expect("ASCII")
}

/// A length in `min..=max` determined by `seed`.
fn length(seed: u64, (min, max): (usize, usize)) -> usize {
    min + below(mix(seed), (max - min + 1) as u64) as usize
}

/// A version-4-shaped UUID determined by `seed`.
pub fn uuid(seed: u64) -> Uuid {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&mix(seed).to_be_bytes());
    bytes[8..].copy_from_slice(&mix2(seed).to_be_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// tabular2's value columns, in the order of [`tabular2_fields`].
pub const TABULAR2_DATA: [&str; 8] = [
    "data0", "data1", "data2", "data3", "data4", "data5", "data6", "data7",
];

/// Row `k`'s partition and clustering key over `parts` partitions.
pub fn tabular2_key(k: u64, parts: u64) -> (String, String) {
    ((k % parts).to_string(), (k / parts).to_string())
}

/// Row `k`'s eight tabular2 fields.
pub fn tabular2_fields(k: u64) -> [String; 8] {
    std::array::from_fn(|i| {
        let seed = mix(k ^ ((i as u64 + 1) << 56));
        text(seed, length(seed, TABULAR2_FIELDS[i]))
    })
}

/// Row `k` of nb-iot over `machines` machines: the partition and clustering key.
pub fn iot_key(k: u64, machines: u64) -> (Uuid, &'static str, CqlTimestamp) {
    let (machine, sensor) = iot_partition(k % machines, mix2(k));
    let time = IOT_EPOCH_MS + (k / machines) as i64 * IOT_STEP_MS;
    (machine, sensor, CqlTimestamp(time))
}

/// A read's partition: machine `m`, one of its sensors chosen by `h`.
pub fn iot_partition(m: u64, h: u64) -> (Uuid, &'static str) {
    let sensor = IOT_SENSORS[below(h, IOT_SENSORS.len() as u64) as usize];
    (uuid(m), sensor)
}

/// Row `k`'s nb-iot values: sensor value, station and data.
pub fn iot_values(k: u64, machines: u64) -> (f64, Uuid, String) {
    // Normal(100, 5) from two uniforms (Box-Muller), rounded to 1/1000.
    let u1 = ((mix(k) >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let u2 = (mix2(k) >> 11) as f64 / (1u64 << 53) as f64;
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    let value = ((100.0 + 5.0 * z) * 1000.0).round() / 1000.0;
    let station = uuid(u64::MAX - (k / machines) % IOT_STATIONS);
    let seed = mix(k ^ 0xDA7A);
    (value, station, text(seed, length(seed, IOT_DATA)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabular2_fields_have_the_reference_lengths_and_total() {
        let n = 20_000u64;
        let mut total = 0usize;
        let mut seen = [(usize::MAX, 0usize); 8];
        for k in 0..n {
            let f = tabular2_fields(k);
            assert_eq!(f, tabular2_fields(k), "a function of the row");
            for (i, s) in f.iter().enumerate() {
                let (min, max) = TABULAR2_FIELDS[i];
                assert!((min..=max).contains(&s.len()), "data{i}: {}", s.len());
                assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b == b' '));
                seen[i] = (seen[i].0.min(s.len()), seen[i].1.max(s.len()));
                total += s.len();
            }
        }
        // Every length in each range occurs, and the mean row is the reference's ~865 B.
        assert_eq!(seen, TABULAR2_FIELDS);
        let mean = total as f64 / n as f64;
        assert!((860.0..870.0).contains(&mean), "{mean}");
    }

    #[test]
    fn iot_rows_have_the_reference_shape() {
        let machines = 100;
        let mut data = 0usize;
        let mut values = Vec::new();
        for k in 0..10_000u64 {
            let (m, sensor, t) = iot_key(k, machines);
            assert_eq!((m, sensor, t), iot_key(k, machines));
            assert_eq!(m.get_version_num(), 4);
            assert!(IOT_SENSORS.contains(&sensor));
            // One reading per machine per step: times of one machine differ.
            assert_eq!(t.0, IOT_EPOCH_MS + (k / machines) as i64 * IOT_STEP_MS);
            let (v, _, d) = iot_values(k, machines);
            assert!((800..=1200).contains(&d.len()));
            data += d.len();
            values.push(v);
        }
        let mean_data = data as f64 / 10_000.0;
        assert!((990.0..1010.0).contains(&mean_data), "{mean_data}");
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let sd =
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64).sqrt();
        assert!((mean - 100.0).abs() < 0.2, "{mean}");
        assert!((sd - 5.0).abs() < 0.2, "{sd}");
        let stations: std::collections::BTreeSet<Uuid> = (0..10_000u64 * 100)
            .step_by(machines as usize)
            .map(|k| iot_values(k, machines).1)
            .collect();
        assert_eq!(stations.len() as u64, IOT_STATIONS);
    }
}
