//! `cqlbench profile` through the real binary: every shipped profile is valid and shown; a
//! bad one is refused in one line naming the file and the key, and never with a panic.

use std::path::Path;

fn cqlbench() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("cqlbench").unwrap()
}

#[test]
fn every_shipped_profile_is_valid_with_its_mix() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    for (file, ops) in [
        ("timeseries.yaml", "ops(insert=3,latest=1,window=1)"),
        ("collections.yaml", "ops(insert=1,by_id=4,by_email=1)"),
        ("lwt.yaml", "ops(insert=1,create=1,transfer=2,read=4)"),
        ("counters.yaml", "view=4,read=1"),
        ("alltypes.yaml", "ops(insert=1,one=1)"),
        ("standard1.yaml", "ops(insert=1,read=1)"),
    ] {
        let f = dir.join(file);
        let a = cqlbench()
            .args(["profile", f.to_str().unwrap(), "--profile-ops", ops])
            .assert()
            .success();
        let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
        assert!(out.contains("the profile is valid"), "{file}: {out}");
        assert!(
            out.contains("sample row (partition 0, row 0)"),
            "{file}: {out}"
        );
        assert!(out.contains("ops: "), "{file}: {out}");
        // Without --ops too.
        cqlbench()
            .args(["profile", f.to_str().unwrap()])
            .assert()
            .success();
    }
}

#[test]
fn bad_profiles_and_mixes_are_refused_in_one_line() {
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/timeseries.yaml"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (
            good.replace("gaussian(64..256)", "zipfy(64..256)"),
            vec![],
            "columnspec[4].size: 'zipfy(64..256)': unknown distribution 'zipfy'",
        ),
        (
            good.replace("and day = ? limit 10", "and dia = ? limit 10"),
            vec![],
            "queries.latest.cql: column 'dia' is not in table readings",
        ),
        (
            good.clone(),
            vec!["--profile-ops", "ops(insert=1,oldest=1)"],
            "ops: 'oldest' is neither insert nor a query",
        ),
        (
            good.clone(),
            vec!["--profile-ops", "ops(insert)"],
            "--profile-ops 'insert' in 'ops(insert)'",
        ),
        (
            good.replace("    raw blob,", "    raw duration,"),
            vec![],
            "table_definition: column raw: type 'duration' has no value generator",
        ),
        (
            good.replace("table: readings", "table: [readings"),
            vec![],
            "yaml: ",
        ),
        // A negative size would write empty values; an insert of no partition writes nothing.
        // The old spelling of the mix, refused with the one that works.
        (
            good.clone(),
            vec!["--ops", "ops(insert=1)"],
            "--ops: a profile's operation mix is --profile-ops",
        ),
        (
            good.replace("gaussian(64..256)", "fixed(-100)"),
            vec![],
            "columnspec[4].size: 'fixed(-100)': a size is at least 0",
        ),
        (
            good.replacen("partitions: fixed(1)", "partitions: fixed(0)", 1),
            vec![],
            "insert.partitions: 'fixed(0)': an insert writes at least 1 partition",
        ),
    ];
    for (i, (text, extra, says)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("p{i}.yaml"));
        std::fs::write(&f, text).unwrap();
        let out = cqlbench()
            .args(["profile", f.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "case {i} succeeded");
        assert_ne!(out.status.code(), Some(101), "case {i} panicked: {err}");
        assert_eq!(err.trim().lines().count(), 1, "case {i}: {err}");
        assert!(
            // A malformed mix is the flag's error; everything else is the file's.
            says.starts_with("--") || err.contains(f.to_str().unwrap()),
            "case {i} names the file: {err}"
        );
        assert!(err.contains(says), "case {i}: {err}");
    }
    let out = cqlbench()
        .args(["profile", "/nonexistent/p.yaml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("/nonexistent/p.yaml: file: "), "{err}");
}

/// The sample row shows every value as the CQL literal that writes it, never the driver's
/// debug form (issue 38: `Decimal(CqlDecimal { int_val: CqlVarint([…`).
#[test]
fn the_sample_row_is_cql_literals() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/alltypes.yaml");
    let a = cqlbench()
        .args(["profile", f.to_str().unwrap()])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let sample: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("sample row"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let value = |name: &str| -> String {
        let prefix = format!("  {name} = ");
        sample
            .iter()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {name} in {sample:?}"))
            .to_string()
    };
    for debug in [
        "Cql", "Varint(", "Decimal(", "List(", "Set(", "Map(", "Time(", "Text(",
    ] {
        assert!(!out.contains(debug), "{debug} in:\n{out}");
    }
    let digits = |s: &str| {
        s.trim_start_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit())
    };
    assert!(digits(&value("v")), "varint {}", value("v"));
    let dec = value("dec");
    assert!(
        dec.split_once('.')
            .is_some_and(|(i, f)| digits(i) && digits(f)),
        "decimal {dec}"
    );
    let quoted = |s: &str| s.starts_with('\'') && s.ends_with('\'');
    let ts = value("ts");
    assert!(
        quoted(&ts) && ts.ends_with("Z'") && ts.contains('T'),
        "{ts}"
    );
    let dt = value("dt");
    assert!(quoted(&dt) && dt.len() == 12, "date {dt}");
    let tm = value("tm");
    assert!(quoted(&tm) && tm.matches(':').count() == 2, "time {tm}");
    assert!(value("b").starts_with("0x"), "blob");
    assert!(value("li").starts_with('[') && value("li").ends_with(']'));
    assert!(value("st").starts_with("{'"), "set {}", value("st"));
    assert!(value("mp").starts_with('{') && value("mp").contains(": '"));
    assert!(["true", "false"].contains(&value("yes").as_str()));
}
