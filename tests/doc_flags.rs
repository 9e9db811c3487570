//! Every `--flag` the shipped docs and scenario headers name exists: it is a long flag of
//! some `cqlbench` command (read from the parser itself), or a flag of another tool the docs
//! show (listed below with the tool). A flag renamed or removed in the code fails here, naming
//! the file and line that still advertise it.

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::Path;

/// The long flags (and their aliases) of `c` itself.
fn own_flags(c: &clap::Command, out: &mut BTreeSet<String>) {
    for a in c.get_arguments() {
        if let Some(l) = a.get_long() {
            out.insert(format!("--{l}"));
        }
        for alias in a.get_all_aliases().into_iter().flatten() {
            out.insert(format!("--{alias}"));
        }
    }
}

/// Every long flag of every (sub)command.
fn cqlbench_flags() -> BTreeSet<String> {
    fn walk(c: &clap::Command, out: &mut BTreeSet<String>) {
        own_flags(c, out);
        for s in c.get_subcommands() {
            walk(s, out);
        }
    }
    let mut out = BTreeSet::from(["--help".to_string(), "--version".to_string()]);
    walk(&cqlbench::cli::Cli::command(), &mut out);
    out
}

/// Flags of other tools the docs show, each with its tool (checked by hand against that
/// tool's documentation when added here).
const FOREIGN: &[(&str, &str)] = &[
    ("--all-features", "cargo"),
    ("--all-targets", "cargo"),
    ("--bin", "cargo"),
    ("--check", "cargo fmt"),
    ("--example", "cargo"),
    ("--features", "cargo"),
    ("--release", "cargo"),
    ("--test", "cargo"),
    ("--timings", "cargo build"),
    ("--call-graph", "perf record"),
    ("--config", "prometheus --config.file"),
    ("--cpu-max-prime", "sysbench cpu"),
    ("--time", "sysbench"),
    ("--output-format", "fio"),
    ("--direct-io", "losetup"),
    ("--dump-dom", "chromium"),
    ("--enable-logging", "chromium"),
    ("--v", "chromium"),
    ("--for", "kubectl wait"),
    ("--strict", "kubernetes-validate"),
    ("--kubernetes-version", "kubernetes-validate"),
    ("--runtime", "podman run"),
    ("--ulimit", "podman run"),
];

/// The files that document cqlbench: the READMEs, docs/ and the shipped scenarios.
fn documents(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("bench/README.md")];
    for dir in ["docs", "scenarios"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md" || x == "yaml") {
                files.push(p);
            }
        }
    }
    files
}

/// The long flags the project's own scripts and examples take (`bench/load.py --repeat`,
/// `scripts/image.sh --binary`): every `--name` their sources spell.
fn script_flags(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in ["bench", "scripts", "scripts/k8s", "examples"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension()
                .is_some_and(|x| x == "py" || x == "sh" || x == "rs")
            {
                let text = std::fs::read_to_string(&p).unwrap();
                out.extend(text.lines().flat_map(long_flags));
            }
        }
    }
    out
}

#[test]
fn every_flag_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = cqlbench_flags();
    let scripts = script_flags(root);
    let foreign: BTreeSet<&str> = FOREIGN.iter().map(|(f, _)| *f).collect();
    // The scanner itself: these are found, and the script flags include a known one.
    assert_eq!(
        long_flags("`run --rate 10`, x--y, ---z, --tls-key-password-file F --"),
        ["--rate", "--tls-key-password-file"]
    );
    assert!(ours.contains("--tls-key-password-env") && ours.contains("--netns"));
    assert!(
        scripts.contains("--server-warmup"),
        "bench/load.py's flags read"
    );
    let mut unknown = Vec::new();
    let mut used_foreign = BTreeSet::new();
    for f in documents(root) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for flag in long_flags(line) {
                if foreign.contains(flag.as_str()) {
                    used_foreign.insert(flag);
                } else if !ours.contains(&flag) && !scripts.contains(&flag) {
                    unknown.push(format!(
                        "{}:{}: {flag}",
                        f.strip_prefix(root).unwrap().display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "flags no cqlbench command, project script or listed tool takes:\n{}",
        unknown.join("\n")
    );
    // A foreign flag no doc names any more leaves the list.
    let stale: Vec<&str> = foreign
        .iter()
        .filter(|f| !used_foreign.contains(**f))
        .copied()
        .collect();
    assert!(stale.is_empty(), "listed but named by no doc: {stale:?}");
}

/// The long flags of the command `path` (`["cluster", "create"]`), with the parents'
/// global ones; None when no such command exists.
fn command_flags(path: &[&str]) -> Option<BTreeSet<String>> {
    let mut c = cqlbench::cli::Cli::command();
    let mut out = BTreeSet::from(["--help".to_string()]);
    own_flags(&c, &mut out);
    for name in path {
        c = c.find_subcommand(name)?.clone();
        own_flags(&c, &mut out);
    }
    Some(out)
}

/// `cqlbench SUB… --flag…` commands the docs show (inline code and code blocks, a `\`
/// continuation joined): for each, the subcommand path and the flags given to it.
fn invocations(text: &str) -> Vec<(Vec<String>, Vec<String>, usize)> {
    let top: BTreeSet<String> = cqlbench::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut out = Vec::new();
    let mut joined = String::new();
    let mut first = 0;
    for (n, line) in text.lines().enumerate() {
        if joined.is_empty() {
            first = n + 1;
        }
        if let Some(head) = line.trim_end().strip_suffix('\\') {
            joined.push_str(head);
            joined.push(' ');
            continue;
        }
        joined.push_str(line);
        for segment in joined.split(['`', '|', ';', '(', ')', '&', '$']) {
            let words: Vec<&str> = segment.split_whitespace().collect();
            let Some(at) = words.iter().position(|w| *w == "cqlbench") else {
                continue;
            };
            let rest = &words[at + 1..];
            if !rest.first().is_some_and(|w| top.contains(*w)) {
                continue;
            }
            // The subcommand path: words while they name a subcommand of the one before.
            let mut path: Vec<String> = Vec::new();
            let mut c = cqlbench::cli::Cli::command();
            for w in rest {
                match c.find_subcommand(w) {
                    Some(sub) => {
                        path.push(w.to_string());
                        c = sub.clone();
                    }
                    None => break,
                }
            }
            // A shell comment ends the command.
            let args: Vec<&str> = rest[path.len()..]
                .iter()
                .take_while(|w| !w.starts_with('#'))
                .copied()
                .collect();
            // After `--`, the arguments of the command the renderer runs in each pod.
            let (own, passed) = match args.iter().position(|w| *w == "--") {
                Some(i) => (&args[..i], &args[i + 1..]),
                None => (&args[..], &[][..]),
            };
            let flags = |ws: &[&str]| ws.iter().flat_map(|w| long_flags(w)).collect::<Vec<_>>();
            out.push((path.clone(), flags(own), first));
            if !passed.is_empty() {
                let inner = match (path.join(" ").as_str(), passed.first()) {
                    ("k8s loaders", Some(&"capacity")) => vec!["capacity".to_string()],
                    ("k8s loaders", _) => vec!["run".to_string()],
                    ("k8s probe", _) => vec!["probe".to_string()],
                    // Another program's arguments (`cluster nodetool -- status`).
                    _ => Vec::new(),
                };
                if !inner.is_empty() {
                    out.push((inner, flags(passed), first));
                }
            }
        }
        joined.clear();
    }
    out
}

#[test]
fn every_flag_a_doc_gives_a_command_is_that_commands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for f in documents(root) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (path, flags, line) in invocations(&text) {
            let known = command_flags(&path.iter().map(String::as_str).collect::<Vec<_>>())
                .expect("a path of subcommands found by name");
            for flag in flags {
                checked += 1;
                if !known.contains(&flag) {
                    wrong.push(format!(
                        "{}:{line}: cqlbench {} {flag}",
                        f.strip_prefix(root).unwrap().display(),
                        path.join(" ")
                    ));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} flags found in commands: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "flags given to a command that does not take them:\n{}",
        wrong.join("\n")
    );
}

/// The `--name` tokens of a line: two dashes not preceded by a letter, digit or dash, then
/// lower-case letters, digits and inner dashes.
fn long_flags(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let before_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
        if before_ok && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
            let mut j = i + 2;
            while j < b.len()
                && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'-')
            {
                j += 1;
            }
            out.push(line[i..j].trim_end_matches('-').to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}
