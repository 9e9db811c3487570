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

/// A population is a distribution of value seeds, as in cassandra-stress: 0 is a seed like any
/// other, so `uniform(0..3)` gives at most four distinct values (an attachment count).
#[test]
fn a_population_from_zero_is_a_valid_set_of_seeds() {
    let text = std::fs::read_to_string(shipped("timeseries.yaml"))
        .unwrap()
        .replace("population: uniform(1..5)", "population: uniform(0..3)");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zero.yaml");
    std::fs::write(&path, &text).unwrap();
    let p = Profile::load(&path).unwrap();
    let units: std::collections::BTreeSet<String> = (0..400)
        .map(|r| format!("{:?}", p.row(r, r)[4].1))
        .collect();
    assert!((2..=4).contains(&units.len()), "{units:?}");
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
            "expected ':' at line 35",
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

mod verify_reads {
    //! `--verify` on profile reads: returned rows identified by their keys and compared.

    use scylla::value::{CqlValue, Row};

    use super::super::check::{RowIndex, check_rows, row_id, same};
    use super::*;
    use crate::workload::check::{Unchecked, Verdict};

    fn row(v: Vec<CqlValue>) -> Row {
        Row {
            columns: v.into_iter().map(Some).collect(),
        }
    }

    /// Columns `names` of row `r` of partition `p`, as a read returns them.
    fn returned(p: &Profile, part: u64, r: u64, names: &[&str]) -> Row {
        let idx: Vec<usize> = names.iter().map(|n| p.index_of(n)).collect();
        row(p.values(part, r, &idx))
    }

    fn strings(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn queries_know_their_equalities_and_limits() {
        let p = Profile::load(&shipped("timeseries.yaml")).unwrap();
        let latest = &p.queries["latest"];
        assert_eq!(latest.equal, ["sensor_id", "day"]);
        assert!(latest.only_equalities);
        assert_eq!(latest.limit, Some(10));
        let window = &p.queries["window"];
        assert!(!window.only_equalities);
        assert_eq!(window.limit, Some(100));
        let lwt = Profile::load(&shipped("lwt.yaml")).unwrap();
        // The IF condition is not part of the WHERE clause.
        assert_eq!(lwt.queries["transfer"].equal, ["account_id"]);
    }

    #[test]
    fn a_point_read_matches_differs_or_is_missing() {
        let p = Profile::load(&shipped("collections.yaml")).unwrap();
        let index = RowIndex::new(&p, 50);
        let q = &p.queries["by_id"];
        let names = strings(&[
            "user_id", "active", "email", "logins", "name", "prefs", "tags",
        ]);
        let cols: Vec<&str> = names.iter().map(String::as_str).collect();
        let yes = |_: u64| true;
        let check = |rows: &[Row], knows: &dyn Fn(u64) -> bool| {
            check_rows(
                &p,
                &index,
                "by_id",
                q,
                Fields::Samerow,
                7,
                Some(0),
                &names,
                rows,
                knows,
            )
        };
        let good = returned(&p, 7, 0, &cols);
        assert_eq!(check(&[good], &yes), Verdict::Matched(1));
        let mut changed = returned(&p, 7, 0, &cols);
        changed.columns[4] = Some(CqlValue::Text("someone else".into()));
        let Verdict::Mismatch(m) = check(&[changed], &yes) else {
            panic!("a changed name is a mismatch");
        };
        assert_eq!((m.row.as_str(), m.column.as_str()), ("7/0", "name"));
        assert!(matches!(check(&[], &yes), Verdict::Mismatch(m) if m.column == "(row)"));
        assert_eq!(
            check(&[], &|id| id != row_id(7, 0)),
            Verdict::Unchecked(Unchecked::NotYetWritten)
        );
        // Another partition's row (a different key) is not this read's to judge.
        let other = returned(&p, 8, 0, &cols);
        assert!(matches!(check(&[other], &yes), Verdict::Mismatch(m) if m.column == "(row)"));
    }

    #[test]
    fn slices_identify_rows_by_their_clustering_key() {
        let p = Profile::load(&shipped("timeseries.yaml")).unwrap();
        let index = RowIndex::new(&p, 20);
        let q = &p.queries["latest"];
        let names = strings(&["ts", "value"]);
        let rows: Vec<Row> = [5, 1, 9]
            .iter()
            .map(|&r| returned(&p, 4, r, &["ts", "value"]))
            .collect();
        let yes = |_: u64| true;
        let check = |rows: &[Row]| {
            check_rows(
                &p,
                &index,
                "latest",
                q,
                Fields::Samerow,
                4,
                Some(5),
                &names,
                rows,
                &yes,
            )
        };
        assert_eq!(check(&rows), Verdict::Matched(3));
        // Row 5 bound but absent, while under the LIMIT: missing.
        assert!(matches!(check(&rows[1..]), Verdict::Mismatch(m) if m.row == "4/5"));
        // A value from another row.
        let mut swapped: Vec<Row> = rows
            .iter()
            .map(|r| row(r.columns.iter().flatten().cloned().collect()))
            .collect();
        swapped[2].columns[1] = rows[1].columns[1].clone();
        assert!(
            matches!(check(&swapped), Verdict::Mismatch(m) if m.row == "4/9" && m.column == "value")
        );
        // A clustering key the generator never writes in this partition.
        let mut foreign: Vec<Row> = vec![returned(&p, 4, 5, &["ts", "value"])];
        foreign[0].columns[0] = Some(CqlValue::Timestamp(scylla::value::CqlTimestamp(1)));
        assert!(matches!(check(&foreign), Verdict::Mismatch(m) if m.column == "ts"));
    }

    #[test]
    fn counters_are_multiples_of_their_rows_increment() {
        let p = Profile::load(&shipped("counters.yaml")).unwrap();
        let index = RowIndex::new(&p, 10);
        let q = &p.queries["read"];
        let names = strings(&["page", "views"]);
        let delta = match p.values(2, 3, &[p.index_of("views")]).remove(0) {
            CqlValue::Counter(c) => c.0,
            other => panic!("{other:?}"),
        };
        let read = |n: i64| {
            let mut r = returned(&p, 2, 3, &["page", "views"]);
            r.columns[1] = Some(CqlValue::Counter(scylla::value::Counter(n)));
            check_rows(
                &p,
                &index,
                "read",
                q,
                Fields::Multirow,
                2,
                None,
                &names,
                &[r],
                &|_| true,
            )
        };
        assert_eq!(read(delta), Verdict::Matched(1));
        assert_eq!(read(delta * 7), Verdict::Matched(1));
        assert!(matches!(read(0), Verdict::Mismatch(_)));
        if delta > 1 {
            assert!(matches!(read(delta * 3 + 1), Verdict::Mismatch(_)));
        }
    }

    #[test]
    fn empty_collections_read_back_as_null_and_sets_in_any_order() {
        let empty = CqlValue::Set(Vec::new());
        assert!(same(&empty, None));
        assert!(!same(&CqlValue::Text(String::new()), None));
        let a = CqlValue::Set(vec![CqlValue::Int(10), CqlValue::Int(9)]);
        let b = CqlValue::Set(vec![CqlValue::Int(9), CqlValue::Int(10)]);
        assert!(same(&a, Some(&b)));
        assert!(!same(&a, Some(&CqlValue::Set(vec![CqlValue::Int(9)]))));
    }

    #[test]
    fn colliding_partition_keys_match_either_partitions_row() {
        // 400 partitions over a population of 100 user ids: keys collide, and the table holds
        // whichever partition wrote last.
        let text = std::fs::read_to_string(shipped("collections.yaml"))
            .unwrap()
            .replace("uniform(1..1M)", "uniform(1..100)");
        let p = Profile::parse(Path::new("few-ids.yaml"), &text).unwrap();
        let index = RowIndex::new(&p, 400);
        let id = p.index_of("user_id");
        let (a, b) = (0..400u64)
            .flat_map(|a| (a + 1..400).map(move |b| (a, b)))
            .find(|&(a, b)| p.values(a, 0, &[id]) == p.values(b, 0, &[id]))
            .expect("a collision among 400 draws of 100");
        let names = strings(&["user_id", "name"]);
        let q = &p.queries["by_id"];
        let b_row = returned(&p, b, 0, &["user_id", "name"]);
        let v = check_rows(
            &p,
            &index,
            "by_id",
            q,
            Fields::Samerow,
            a,
            Some(0),
            &names,
            &[b_row],
            &|_| true,
        );
        assert_eq!(
            v,
            Verdict::Matched(1),
            "partition {a} shares its key with {b}"
        );
        // A lookup by a's email finds nothing when b's values overwrote a's: not a mismatch.
        let by_email = &p.queries["by_email"];
        let none: [Row; 0] = [];
        let v = check_rows(
            &p,
            &index,
            "by_email",
            by_email,
            Fields::Samerow,
            a,
            Some(0),
            &names,
            &none,
            &|_| true,
        );
        assert_eq!(v, Verdict::Unchecked(Unchecked::NoRowRequired));
    }

    #[test]
    fn verify_refuses_mixes_that_move_rows_away_from_the_generator() {
        let text = std::fs::read_to_string(shipped("collections.yaml")).unwrap()
            + "  drop:\n    cql: delete from users where user_id = ?\n  rename:\n    cql: update users set name = ? where user_id = ?\n    fields: multirow\n";
        let p = Profile::parse(Path::new("c.yaml"), &text).unwrap();
        for (mix, key) in [
            ("insert=1,drop=1", "queries.drop"),
            ("rename=1,by_id=1", "queries.rename"),
        ] {
            let e = p
                .check_verifiable(&parse_ops(mix).unwrap())
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("c.yaml: ") && e.contains(key) && e.contains("to verify"),
                "{e}"
            );
            assert_eq!(e.lines().count(), 1);
        }
        p.check_verifiable(&parse_ops("insert=1,by_id=3,by_email=1").unwrap())
            .unwrap();
        let lwt = Profile::load(&shipped("lwt.yaml")).unwrap();
        lwt.check_verifiable(&parse_ops("insert=1,create=1,transfer=2,read=4").unwrap())
            .unwrap();
    }
}
