//! YAML in and out, in one place: serde-saphyr (a pure-Rust YAML 1.2 parser and emitter, the
//! one `kube` already builds on) reads and writes the files, and a document read as a tree is a
//! [`Value`] — serde_json's, keys in their order — so that scenario files, settings overrides
//! and price catalogues are walked, merged and re-emitted by one model.
//!
//! Why serde-saphyr rather than another successor of the deprecated serde_yaml: the forks that
//! keep serde_yaml's API (serde_norway, serde_yaml_ng) keep its C-translated libyaml and its
//! `Value` type, and would be a second YAML stack in the binary beside the one `kube` already
//! builds on; serde-saphyr is maintained, pure Rust, reads YAML 1.2's core schema when told to
//! (see [`options`]) and says where a document is wrong. It has no tree type of its own, hence
//! serde_json's for the documents walked by hand.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A YAML document as a tree.
pub type Value = serde_json::Value;

/// A YAML mapping, keys in their order of appearance.
pub type Mapping = serde_json::Map<String, Value>;

/// Why a text is not the YAML asked for (the parser's message, its location included).
pub type Error = serde_saphyr::Error;

/// How documents are read: YAML 1.2's core schema, as serde_yaml read them before (`on`, `off`,
/// `yes` and `no` are text, not booleans; `0755` and `1_000` read untyped are text), and errors
/// in one line with their place, without an excerpt. Writing keeps serde-saphyr's default of
/// quoting any text a YAML 1.1 reader would take for something else — Cassandra's SnakeYAML
/// and Kubernetes' go-yaml are such readers — hence `"127.0.0.3"` and `"4.0.6"` in the
/// rendered files.
fn options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.strict_booleans = true;
    o.leading_zero_numbers_as_strings = true;
    o.underscored_numbers_as_strings = true;
    o.with_snippet = false;
    o
}

/// Reads one document.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(text, options())
}

/// Reads every document of a `---`-separated stream.
pub fn from_str_multiple<T: DeserializeOwned>(text: &str) -> Result<Vec<T>, Error> {
    serde_saphyr::from_multiple_with_options(text, options())
}

/// A tree as the type it describes.
pub fn from_value<T: DeserializeOwned>(v: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(v)
}

/// A value as a tree.
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("a value with string keys makes a tree")
}

/// A value as a YAML document.
pub fn to_string<T: Serialize>(v: &T) -> String {
    serde_saphyr::to_string(v).expect("a value with string keys serialises to YAML")
}

/// The first line of a parser's message (its location and a quoted excerpt may follow).
pub fn first_line(e: &Error) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_keeps_key_order() {
        let v: Value = from_str("b: 1\na: [x, 2.5, true]\nc:\n").unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(v["a"][1], 2.5);
        assert!(v["c"].is_null());
        let back: Value = from_str(&to_string(&v)).unwrap();
        assert_eq!(back, v);
        let docs: Vec<Value> = from_str_multiple("a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
        let e = from_str::<Value>("a: [1, 2\n").unwrap_err();
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
        assert!(first_line(&e).contains("line 1"), "{e}");
        let v: Value = from_str("a: off\nb: yes\nc: 0755\nd: true\n").unwrap();
        assert_eq!(v["a"], "off");
        assert_eq!(v["b"], "yes");
        assert_eq!(v["c"], "0755");
        assert_eq!(v["d"], true);
    }
}
