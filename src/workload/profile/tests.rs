//! Profiles as shipped in `workloads/`, rows as a function of numbers, and bad profiles
//! refused in one line naming the file and the key.

use std::path::{Path, PathBuf};

use super::*;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads")
        .join(name)
}

#[test]
fn every_shipped_profile_loads_and_describes_itself() {
    for (file, ops, says) in [
        (
            "timeseries.yaml",
            "ops(insert=3,latest=1,window=1)",
            "window (multirow)",
        ),
        (
            "collections.yaml",
            "ops(insert=1,by_id=4,by_email=1)",
            "binds email =",
        ),
        (
            "lwt.yaml",
            "insert=1,create=1,transfer=2,read=4",
            "lightweight transaction",
        ),
        ("counters.yaml", "ops(view=4,read=1)", "binds views ="),
        ("alltypes.yaml", "ops(insert=1,one=1)", "binds k ="),
    ] {
        let p = Profile::load(&shipped(file)).unwrap_or_else(|e| panic!("{e}"));
        let ops = parse_ops(ops).unwrap();
        p.check_ops(&ops).unwrap();
        let text = p.describe(Some(&ops));
        assert!(text.contains(says), "{file}:\n{text}");
        assert!(text.contains("sample row"), "{file}:\n{text}");
    }
}

#[test]
fn rows_are_a_function_of_partition_and_row_and_follow_the_columnspec() {
    let p = Profile::load(&shipped("timeseries.yaml")).unwrap();
    assert_eq!(p.row(7, 3), p.row(7, 3));
    assert_ne!(p.row(7, 3), p.row(7, 4));
    // ts: cluster uniform(100..1000) rows per partition.
    for part in 0..50 {
        let n: u64 = p.rows_in(part).iter().product();
        assert!((100..=1000).contains(&n), "{n}");
    }
    // The partition key is the same on every row of a partition, and differs between them.
    let key = |part: u64, r: u64| p.row(part, r)[..2].to_vec();
    assert_eq!(key(5, 0), key(5, 99));
    assert_ne!(key(5, 0), key(6, 0));
    // Distinct rows of one partition have distinct clustering values.
    let ts: std::collections::BTreeSet<String> = (0..100)
        .map(|r| format!("{:?}", p.row(5, r)[2].1))
        .collect();
    assert_eq!(ts.len(), 100);
    // unit: size fixed(4), population uniform(1..5): at most 5 distinct values of 4 chars.
    let units: std::collections::BTreeSet<String> = (0..400)
        .map(|r| match &p.row(r, r)[4].1 {
            CqlValue::Text(s) => {
                assert_eq!(s.len(), 4);
                s.clone()
            }
            v => panic!("{v:?}"),
        })
        .collect();
    assert!(units.len() <= 5, "{units:?}");
}

/// Each bad profile: one line naming the file, the key and what is wrong.
#[test]
fn bad_profiles_are_refused_naming_the_file_and_the_key() {
    let good = std::fs::read_to_string(shipped("timeseries.yaml")).unwrap();
    let cases: Vec<(String, &str, &str)> = vec![
        (
            good.replace("gaussian(64..256)", "pareto(64..256)"),
            "columnspec[4].size",
            "unknown distribution 'pareto'",
        ),
        (
            good.replace(
                "sensor_id = ? and day = ? limit 10",
                "sensor = ? and day = ? limit 10",
            ),
            "queries.latest.cql",
            "column 'sensor' is not in table readings",
        ),
        (
            good.replace("    raw blob,", "    raw tuple<int, int>,"),
            "table_definition",
            "has no value generator",
        ),
        (
            good.replace("queries:\n", "queries\n"),
            "yaml",
            "could not find expected ':' at line",
        ),
        (
            good.replace("  - name: unit", "  - name: units"),
            "columnspec[3].name",
            "'units' is not in table",
        ),
        (
            good.replace("table: readings", "table: reading"),
            "table",
            "creates 'readings'",
        ),
        (
            good.replace("batchtype: UNLOGGED", "batchtype: SOMETIMES"),
            "insert.batchtype",
            "SOMETIMES",
        ),
        (
            good.replace("    fields: multirow", "    fields: everyrow"),
            "queries.window.fields",
            "everyrow",
        ),
        (
            good.replace("insert:\n", "inserts:\n"),
            "inserts",
            "unknown field",
        ),
        (
            good.replace("cluster: uniform(100..1000)", "cluster: uniform(0..10)"),
            "columnspec[2].cluster",
            "at least 1",
        ),
    ];
    for (text, key, what) in cases {
        let e = Profile::parse(Path::new("bad.yaml"), &text).unwrap_err();
        let line = e.to_string();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.starts_with(&format!("bad.yaml: {key}")),
            "{key}: {line}"
        );
        assert!(line.contains(what), "{key}: {line}");
    }
    let p = Profile::parse(Path::new("t.yaml"), &good).unwrap();
    let e = p
        .check_ops(&parse_ops("ops(insert=1,lastest=2)").unwrap())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.yaml: ops: 'lastest' is neither insert nor a query of the profile (it offers insert, latest, window)"
    );
    for bad in [
        "ops(insert)",
        "ops(insert=x)",
        "insert=0",
        "insert=1,insert=2",
    ] {
        assert!(parse_ops(bad).is_err(), "{bad}");
    }
}

#[test]
fn rampup_chunks_write_every_row_of_every_partition_once() {
    for file in [
        "timeseries.yaml",
        "counters.yaml",
        "collections.yaml",
        "alltypes.yaml",
    ] {
        let p = Profile::load(&shipped(file)).unwrap();
        let (per_chunk, chunks) = p.rampup_chunks();
        assert!(
            chunks <= RAMPUP_MAX_CHUNKS && per_chunk >= RAMPUP_CHUNK_ROWS,
            "{file}"
        );
        let partitions = 30;
        let mut seen = std::collections::BTreeSet::new();
        for cycle in 0..partitions * chunks {
            let (part, rows) = p.rampup_rows(cycle, partitions);
            assert!(rows.end - rows.start <= per_chunk, "{file}");
            for r in rows {
                assert!(
                    seen.insert((part, r)),
                    "{file}: ({part}, {r}) written twice"
                );
            }
        }
        let want: u64 = (0..partitions)
            .map(|part| p.rows_in(part).iter().product::<u64>().max(1))
            .sum();
        assert_eq!(seen.len() as u64, want, "{file}: every row once");
    }
    // timeseries: up to 1,000 rows a partition, 16 a chunk: 63 chunks.
    let ts = Profile::load(&shipped("timeseries.yaml")).unwrap();
    assert_eq!(ts.rampup_chunks(), (16, 63));
}
