//! One entry of a catalogue file read into its derived struct (serde, the field checks of
//! [`super::fields`]), its errors naming the file, the entry and the field:
//! `prices.yaml: instance "r5.2xlarge": field "vcpus": expected a positive integer`.

use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;

use crate::prices::PriceError;
use crate::yaml::Value;

/// An entry of the catalogue by the label errors name it by.
pub(super) struct Entry<'a> {
    pub file: &'a str,
    pub label: String,
}

impl Entry<'_> {
    pub(super) fn err(&self, field: &str, problem: &str) -> PriceError {
        PriceError::CatalogField {
            file: self.file.to_string(),
            entry: self.label.clone(),
            field: field.to_string(),
            problem: problem.to_string(),
        }
    }

    /// Reads `v`, a mapping of fields, as a `T`; what serde refuses is named by its field, and
    /// by its item where it is inside one of the entry's lists (`reserved #2`, `iops tier #1`,
    /// `tier "P10"`).
    pub(super) fn read<T: DeserializeOwned>(&self, v: &Value) -> Result<T, PriceError> {
        if !v.is_object() {
            return Err(PriceError::CatalogFile {
                file: self.file.to_string(),
                problem: format!("{}: expected a mapping of fields", self.label),
            });
        }
        serde_path_to_error::deserialize(v.clone()).map_err(|e| {
            let mut label = self.label.clone();
            let mut field = String::new();
            let mut at = v;
            let mut list = "";
            for segment in e.path().iter() {
                match segment {
                    Segment::Map { key } => {
                        at = &at[key.as_str()];
                        list = key.as_str();
                        field = key.clone();
                    }
                    Segment::Seq { index } => {
                        at = &at[*index];
                        label = format!("{label} {}", item_label(list, *index, at));
                        field.clear();
                    }
                    _ => {}
                }
            }
            let message = e.into_inner().to_string();
            let (named, problem) = in_words(&message);
            match named.or((!field.is_empty()).then_some(field.as_str())) {
                Some(field) => Entry {
                    file: self.file,
                    label,
                }
                .err(field, &problem),
                None => PriceError::CatalogFile {
                    file: self.file.to_string(),
                    problem: format!("{label}: {problem}"),
                },
            }
        })
    }
}

/// How an item of one of an entry's lists is named.
fn item_label(list: &str, index: usize, item: &Value) -> String {
    match (list, item.get("name").and_then(Value::as_str)) {
        ("tiers", Some(name)) => format!("tier \"{name}\""),
        ("tiers", None) => format!("tier #{}", index + 1),
        ("iops_tiers", _) => format!("iops tier #{}", index + 1),
        (list, _) => format!("{list} #{}", index + 1),
    }
}

/// serde's message in the catalogue's words, and the field it names when it names one
/// (a missing or unknown field).
fn in_words(message: &str) -> (Option<&str>, String) {
    let quoted = |rest: &str| rest.split('`').next().unwrap_or_default().len();
    if let Some(rest) = message.strip_prefix("missing field `") {
        return (Some(&rest[..quoted(rest)]), "missing".into());
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let known: Vec<&str> = rest[quoted(rest)..].split('`').skip(2).step_by(2).collect();
        return (
            Some(&rest[..quoted(rest)]),
            format!("unknown field (known: {})", known.join(", ")),
        );
    }
    if message.contains("expected struct") || message.contains("expected a map") {
        return (None, "expected a mapping of fields".into());
    }
    if message.ends_with("expected a sequence") {
        return (None, "expected a list".into());
    }
    (None, message.to_string())
}
