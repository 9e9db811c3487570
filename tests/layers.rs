//! The crate's modules flow one way: each may import (`crate::…`) only the modules on the lines
//! above its own in the order written in `src/lib.rs` (between the two ```text fences of its
//! "Layers" section). Modules on one line are peers and do not import each other. A file's
//! own module, its submodules and tests count as the module. Fails naming every file and line
//! that imports against the order.
//!
//! Also the code's size and error rules, checked the same way so that they cannot quietly
//! return (DEVELOPERS.md's standards, issue 54): no `Result<_, String>` (a typed error or
//! `Invalid` instead), no function over [`MAX_FN_LINES`] lines and no file over
//! [`MAX_FILE_LINES`], test code left out. What broke a rule when the rule was written is
//! listed below with its size: it may shrink or go, not grow; anything new fails, named by
//! file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The order from `src/lib.rs`: module name → its line's index (0 = bottom layer).
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = doc
        .iter()
        .position(|l| l.trim() == "```text")
        .expect("src/lib.rs: a ```text block with the layer order");
    let end = start
        + 1
        + doc[start + 1..]
            .iter()
            .position(|l| l.trim() == "```")
            .expect("the layer block is closed");
    let mut order = BTreeMap::new();
    for (i, line) in doc[start + 1..end].iter().enumerate() {
        // `name, name  description`: the names come before two spaces.
        let names = line.split("  ").next().unwrap_or("");
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.trim_end_matches('/').trim_end_matches(".rs");
            assert!(
                order.insert(name.to_string(), i).is_none(),
                "src/lib.rs: module {name} is listed twice in the layer order"
            );
        }
    }
    order
}

/// The file's text with comments, string and char literals blanked (newlines kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if b[i] == b'r'
            && (b[i + 1..].starts_with(b"\"") || b[i + 1..].starts_with(b"#"))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j >= b.len() || b[j] != b'"' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body_end = b[j + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| j + 1 + p + close.len());
            for &c in &b[i..body_end] {
                blank(&mut out, c);
            }
            i = body_end;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\''
            && i + 2 < b.len()
            && (b[i + 2] == b'\'' || (b[i + 1] == b'\\' && b[i + 3..].contains(&b'\'')))
        {
            // A char literal ('a', '\n', '\''); a lifetime ('a) is left alone.
            let len = if b[i + 1] == b'\\' {
                b[i + 2..].iter().position(|&c| c == b'\'').unwrap() + 3
            } else {
                3
            };
            out.extend(std::iter::repeat_n(b' ', len));
            i += len;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("ASCII replacements keep UTF-8")
}

/// Every `crate::NAME` in `code` (also each first name inside `crate::{…}`), with its line.
fn crate_imports(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().last();
        // `$crate::` (in a macro) is this crate too; `foo_crate::` is not.
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let line = code[..at].matches('\n').count() + 1;
        let rest = code[at + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: those after `{` or a `,` at depth 0.
            let mut depth = 0;
            let mut expect_name = true;
            let mut offset = 0;
            for (k, c) in group.char_indices() {
                if k < offset {
                    continue;
                }
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    c if expect_name && depth == 0 && !c.is_whitespace() => {
                        let name = ident(&group[k..]);
                        offset = k + name.len().max(1);
                        if !name.is_empty() {
                            let l = line + group[..k].matches('\n').count();
                            found.push((l, name));
                        }
                        expect_name = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            let after = rest[name.len()..].trim_start();
            if after.starts_with('!') {
                // A macro exported at the crate's root: named by its definition's module.
                found.push((line, format!("{name}!")));
            } else if !name.is_empty() {
                found.push((line, name));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file of `src/` belongs to: its first path component, without `.rs`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The imports of the files in `src` that go against `order`, as `file:line: …` lines.
fn violations(src: &Path, order: &BTreeMap<String, usize>) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    // `#[macro_export]` macros are used as `crate::NAME!`: they belong to the module defining them.
    let mut macros = BTreeMap::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (at, _) in code.match_indices("macro_rules!") {
            let rest = code[at + "macro_rules!".len()..].trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            macros.insert(format!("{name}!"), module_of(src, f));
        }
    }
    let mut bad = Vec::new();
    for f in files {
        let module = module_of(src, &f);
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let shown = f.strip_prefix(src.parent().unwrap()).unwrap().display();
        let Some(&own) = order.get(&module) else {
            bad.push(format!(
                "{shown}: module {module} is not in the layer order of src/lib.rs"
            ));
            continue;
        };
        for (line, target) in crate_imports(&code_only(&text)) {
            let target = macros.get(&target).cloned().unwrap_or(target);
            if target == module {
                continue;
            }
            match order.get(&target) {
                None => bad.push(format!(
                    "{shown}:{line}: crate::{target} is not a module in the layer order"
                )),
                Some(&t) if t >= own => bad.push(format!(
                    "{shown}:{line}: {module} imports {target}, which is {} it in src/lib.rs's layer order",
                    if t == own { "beside" } else { "above" }
                )),
                Some(_) => {}
            }
        }
    }
    bad
}

#[test]
fn modules_import_only_the_layers_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let order = layers(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap());
    let bad = violations(&root.join("src"), &order);
    assert!(
        bad.is_empty(),
        "imports against the layer order:\n{}",
        bad.join("\n")
    );
}

/// The check itself: a back edge and a peer edge are found and named by file and line, a
/// comment, a string or a `$crate` path in a macro is not mistaken for an import, and a
/// grouped import names each of its modules.
#[test]
fn a_back_edge_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("result")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "//! Layers:\n//! ```text\n//! error  errors\n//! format  formats\n//! result  results\n//! load, fault  engine\n//! ```\n",
    )
    .unwrap();
    std::fs::write(src.join("error.rs"), "pub struct E;\n").unwrap();
    std::fs::write(src.join("format.rs"), "use crate::error::E;\n").unwrap();
    std::fs::write(
        src.join("result/mod.rs"),
        "use crate::error::E;\n// crate::load is only named here\nconst S: &str = \"crate::load\";\nmacro_rules! m { () => { $crate::format::x() } }\nuse crate::{\n    format::y,\n    load::LogEntry,\n};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("load.rs"),
        "use crate::result::RunResult;\nuse crate::fault::Fault;\nfn f() -> char { '\"' }\nuse crate::nowhere::X;\n",
    )
    .unwrap();
    let order = layers(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert_eq!(order["result"], 2);
    let bad = violations(&src, &order);
    assert_eq!(
        bad,
        [
            "src/load.rs:2: load imports fault, which is beside it in src/lib.rs's layer order",
            "src/load.rs:4: crate::nowhere is not a module in the layer order",
            "src/result/mod.rs:7: result imports load, which is above it in src/lib.rs's layer order",
        ]
    );
}

/// The longest a non-test function may be, in lines from its `fn` to its closing brace.
const MAX_FN_LINES: usize = 120;
/// The longest a file may be, in lines, its test modules left out.
const MAX_FILE_LINES: usize = 800;

/// `Result<_, String>` where it was when the rule was written: (file, how many).
const KNOWN_STRING_ERRORS: &[(&str, usize)] = &[];
/// Functions over [`MAX_FN_LINES`] when the rule was written: (file, function, lines).
const KNOWN_LONG_FNS: &[(&str, &str, usize)] = &[
    ("src/live.rs", "register", 136),
    ("src/load/session.rs", "connect_counted", 124),
    ("src/result/fixture.rs", "capacity", 125),
    ("src/scenario/capacity.rs", "step", 136),
];
/// Files over [`MAX_FILE_LINES`] when the rule was written: (file, lines).
const KNOWN_LARGE_FILES: &[(&str, usize)] = &[("src/metrics/prometheus_server.rs", 808)];

/// A file of test code only: `tests.rs`, `*_tests.rs`.
fn test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Whether the `#[cfg(…)]` attribute at the start of `text` compiles only in tests:
/// `cfg(test)` or `cfg(all(…, test, …))`.
fn test_only_cfg(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("#[cfg(")
        .and_then(|t| t.split_once(")]"))
        .map(|(inner, _)| inner.trim())
    else {
        return false;
    };
    // `)]` closed the attribute unless `all(` left a parenthesis open: `all(test, x))]`.
    let inner = inner.strip_suffix(')').unwrap_or(inner);
    inner == "test"
        || inner
            .strip_prefix("all(")
            .is_some_and(|args| args.split(',').any(|a| a.trim() == "test"))
}

/// `code` (from [`code_only`]) with the body of every module that compiles only in tests
/// (`#[cfg(test)]`, `#[cfg(all(test, …))]`) blanked, lines kept.
fn without_test_modules(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(").map(|i| i + from) {
        from = at + 1;
        let rest = &code[at..];
        if !test_only_cfg(rest) {
            continue;
        }
        let Some(brace) = rest.find(['{', ';']) else {
            break;
        };
        if !rest[..brace].contains("mod ") || rest.as_bytes()[brace] == b';' {
            continue;
        }
        if let Some(end) = closing_brace(rest) {
            for b in &mut out[at..=at + end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    String::from_utf8(out).expect("ASCII replacements keep UTF-8")
}

/// Where the brace closing `text`'s first `{` is (an offset into `text`).
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

fn word_before(code: &str, at: usize) -> bool {
    code[..at]
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Each `Result<…, String>` in `code`, by line.
fn string_errors(code: &str) -> Vec<usize> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        if word_before(code, at) {
            continue;
        }
        let body = &code[at + "Result<".len()..];
        let (mut depth, mut last_comma, mut prev) = (0i32, None, ' ');
        for (i, c) in body.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '>' if prev == '-' => {}
                '>' if depth == 0 => {
                    if last_comma.is_some_and(|k: usize| body[k + 1..i].trim() == "String") {
                        found.push(line_of(code, at));
                    }
                    break;
                }
                '>' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(i),
                ';' | '{' => break,
                _ => {}
            }
            prev = c;
        }
    }
    found
}

/// Each function in `code` with a body: (name, line of its `fn`, lines long).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if word_before(code, at) {
            continue;
        }
        let rest = &code[at + 3..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let Some(open) = rest.find(['{', ';']) else {
            continue;
        };
        if rest.as_bytes()[open] == b';' {
            continue;
        }
        if let Some(end) = closing_brace(&rest[open..]) {
            let first = line_of(code, at);
            let last = line_of(code, at + 3 + open + end);
            found.push((name, first, last - first + 1));
        }
    }
    found
}

/// Every break of the size and error rules in the files of `src`, as `file:line: …` lines,
/// the known ones allowed at their recorded size.
fn rule_breaks(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !test_file(f)) {
        let shown = f.strip_prefix(src.parent().unwrap()).unwrap();
        let shown = shown.to_string_lossy();
        let code = without_test_modules(&code_only(&std::fs::read_to_string(f).unwrap()));
        let errors = string_errors(&code);
        let allowed = KNOWN_STRING_ERRORS
            .iter()
            .find(|(k, _)| *k == shown)
            .map_or(0, |k| k.1);
        if errors.len() > allowed {
            for line in errors {
                bad.push(format!(
                    "{shown}:{line}: Result<_, String>: return a typed error (or crate::error::Invalid) instead ({allowed} allowed in this file)"
                ));
            }
        }
        for (name, line, len) in functions(&code) {
            let allowed = KNOWN_LONG_FNS
                .iter()
                .find(|(k, n, _)| *k == shown && *n == name)
                .map_or(MAX_FN_LINES, |k| k.2.max(MAX_FN_LINES));
            if len > allowed {
                bad.push(format!(
                    "{shown}:{line}: fn {name} is {len} lines, over {allowed}: split it"
                ));
            }
        }
        let lines = code
            .lines()
            .rev()
            .skip_while(|l| l.trim().is_empty())
            .count();
        let allowed = KNOWN_LARGE_FILES
            .iter()
            .find(|(k, _)| *k == shown)
            .map_or(MAX_FILE_LINES, |k| k.1.max(MAX_FILE_LINES));
        if lines > allowed {
            bad.push(format!(
                "{shown}:1: {lines} lines without its tests, over {allowed}: split it"
            ));
        }
    }
    bad
}

#[test]
fn the_code_keeps_its_size_and_error_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bad = rule_breaks(&root.join("src"));
    assert!(bad.is_empty(), "rules broken:\n{}", bad.join("\n"));
}

/// The check itself: each rule's break is found and named by file and line; test modules,
/// test files, comments and strings are left out; a known break may stay at its size.
#[test]
fn a_rule_break_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let long_body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    std::fs::write(
        src.join("a.rs"),
        format!(
            "// Result<(), String> in a comment\nconst S: &str = \"Result<(), String>\";\n\
             pub fn parse(s: &str) -> Result<Vec<(u8, String)>, String> {{\n    todo!()\n}}\n\
             fn ok() -> Result<BTreeMap<u32, String>, Invalid> {{ todo!() }}\n\
             fn long() {{\n{long_body}}}\n\
             #[cfg(test)]\nmod tests {{\n    fn t() -> Result<(), String> {{ Ok(()) }}\n}}\n\
             #[cfg(all(test, feature = \"tls\"))]\nmod tls_tests {{\n    fn t() -> Result<(), String> {{ Ok(()) }}\n}}\n\
             #[cfg(feature = \"tls\")]\nmod tls {{\n    fn t() -> Result<(), String> {{ Ok(()) }}\n}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        src.join("tests.rs"),
        "fn t() -> Result<(), String> { Ok(()) }\n",
    )
    .unwrap();
    let bad = rule_breaks(&src);
    assert_eq!(
        bad,
        [
            "src/a.rs:3: Result<_, String>: return a typed error (or crate::error::Invalid) instead (0 allowed in this file)",
            // Gated by a feature, not by test: production code.
            format!(
                "src/a.rs:{}: Result<_, String>: return a typed error (or crate::error::Invalid) instead (0 allowed in this file)",
                MAX_FN_LINES + 19
            )
            .as_str(),
            format!(
                "src/a.rs:7: fn long is {} lines, over 120: split it",
                MAX_FN_LINES + 2
            )
            .as_str(),
        ]
    );
}
