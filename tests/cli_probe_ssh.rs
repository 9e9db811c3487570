//! `cqlbench probe --ssh` flags through the real binary, without a remote host: malformed
//! values refused in one line before anything runs, nothing written. The flags with valid
//! values, against a real sshd, are in `tests/probe_ssh_real.rs`.

mod common;

use std::path::Path;

fn probe(dir: &Path, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("cqlbench")
        .unwrap()
        .current_dir(dir)
        .env("CQLBENCH_HOME", dir.join("home"))
        .arg("probe")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn malformed_ssh_flags_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id");
    std::fs::write(&key, "not really a key").unwrap();
    let key = key.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--ssh", "", "--dir", "/d"],
            &["invalid ssh destination ''", "no host"],
        ),
        (
            &["--ssh", "root@h:0", "--dir", "/d"],
            &["port '0'", "[USER@]HOST[:PORT]"],
        ),
        (&["--ssh", "h:99999", "--dir", "/d"], &["port '99999'"]),
        (
            &["--ssh=-oProxyCommand=sh", "--dir", "/d"],
            &["host '-oProxyCommand=sh'"],
        ),
        (&["--ssh", "a b@h", "--dir", "/d"], &["user 'a b'"]),
        (&["--ssh", "[::1", "--dir", "/d"], &["no ']'"]),
        (&["--ssh", "db1"], &["--ssh db1 needs --dir"]),
        (
            &["--ssh", "db1", "--dir", "/d", "--cluster", "c"],
            &["--cluster", "--ssh"],
        ),
        (
            &["--ssh", "db1", "--dir", "/d", "--ssh-option", "NoEquals"],
            &["invalid ssh option 'NoEquals'", "KEY=VALUE"],
        ),
        (
            &[
                "--ssh",
                "db1",
                "--dir",
                "/d",
                "--ssh-option",
                "BatchMode=no",
            ],
            &["BatchMode is always yes"],
        ),
        (
            &["--ssh", "db1", "--dir", "/d", "--ssh-option", "Bad Key=1"],
            &["key 'Bad Key'"],
        ),
        (
            &["--ssh-option", "Port=22"],
            &["required arguments were not provided"],
        ),
        (
            &["--ssh-identity", key],
            &["required arguments were not provided"],
        ),
        (
            &[
                "--ssh",
                "db1",
                "--dir",
                "/d",
                "--ssh-identity",
                "/no/such/key",
            ],
            &["--ssh-identity '/no/such/key' is not a file"],
        ),
    ];
    for (args, needles) in cases {
        let out = probe(dir.path(), args);
        common::refused_in_one_line(&out, args, needles);
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        assert!(!dir.path().join("home").exists(), "{args:?} wrote results");
    }
}

/// The flags appear in `--help` with what they take.
#[test]
fn help_documents_the_ssh_flags() {
    let out = probe(Path::new("."), &["--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--ssh <[USER@]HOST[:PORT]>",
        "--ssh-identity <FILE>",
        "--ssh-option <KEY=VALUE>",
    ] {
        assert!(help.contains(needle), "{needle} not in:\n{help}");
    }
}
