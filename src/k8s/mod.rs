//! Kubernetes: objects rendered from specs with the typed API structs of `k8s-openapi`, and the
//! kubectl commands that apply them and collect what they produced. Rendering is pure — nothing
//! but [`job_run`] talks to a cluster — so every manifest is tested (and validated against the
//! Kubernetes OpenAPI schemas, `tests/k8s_validate.rs`) without one.
//!
//! - [`loaders`]: an Indexed Job of N `cqlbench run` shards, their results on a shared claim or
//!   in their logs ([`pod_files`]).
//! - [`job_run`]: that Job applied, followed, collected, merged and deleted through the API;
//!   [`probe_run`] the same for the probe Jobs of [`probe`].
//! - [`cluster`]: a cluster spec as a K8ssandra `K8ssandraCluster` ([`k8ssandra`], checked
//!   against a schema derived from the operator's CRD) and one StorageClass per volume type
//!   ([`storage`]).

pub mod cluster;
pub mod job_run;
pub mod k8ssandra;
pub mod loaders;
pub mod pod_files;
pub mod probe;
pub mod probe_run;
pub mod storage;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::error::Invalid;

/// The Kubernetes API the objects are typed against (k8s-openapi's `v1_33` feature in
/// Cargo.toml); `tests/k8s_validate.rs` validates the manifests against this version's schemas.
pub const KUBERNETES_VERSION: &str = "1.33";

/// Label every object cqlbench renders carries.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
/// The object's role: `loader`, `results`, `collector`, `credentials`.
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
/// The run the object belongs to.
pub const RUN_ID_LABEL: &str = "cqlbench.io/run-id";

/// The labels of a cqlbench object of role `component` in run `run_id`.
pub fn labels(component: &str, run_id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (NAME_LABEL.to_string(), "cqlbench".to_string()),
        (COMPONENT_LABEL.to_string(), component.to_string()),
        (RUN_ID_LABEL.to_string(), run_id.to_string()),
    ])
}

/// One object as a YAML document.
pub fn to_yaml<T: serde::Serialize>(object: &T) -> String {
    // Serialising a k8s-openapi object cannot fail: string-keyed maps, no non-finite floats.
    crate::yaml::to_string(object)
}

/// Documents as one multi-document YAML stream, `---` between them, after `header` (comment
/// lines, each starting with `#`).
pub fn yaml_stream(header: &str, docs: &[String]) -> String {
    format!("{header}{}", docs.join("---\n"))
}

/// A DNS-1123 label of at most `max` (≤ 63) characters: lower-case letters, digits and '-',
/// starting and ending with a letter or digit — what Kubernetes accepts as a namespace or a
/// Job name.
pub fn dns_label(what: &str, s: &str, max: usize) -> Result<(), Invalid> {
    if s.is_empty() || s.len() > max || !label_chars(s) {
        return Err(crate::invalid!(
            "{what} '{s}' is not a DNS-1123 label: give 1 to {max} lower-case letters, digits \
             or '-', starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

/// A DNS-1123 subdomain (at most 253 characters, labels joined by '.') — what Kubernetes
/// accepts as the name of a Secret, a PersistentVolumeClaim or a StorageClass.
pub fn dns_subdomain(what: &str, s: &str) -> Result<(), Invalid> {
    if s.is_empty() || s.len() > 253 || !s.split('.').all(label_chars) {
        return Err(crate::invalid!(
            "{what} '{s}' is not a DNS-1123 subdomain: give lower-case letters, digits, '-' \
             and '.', each dot-separated part starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

fn label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-';
    let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => edge(first) && edge(last) && b.iter().all(inner),
        _ => false,
    }
}

/// A non-empty label value (at most 63 characters: letters, digits, '-', '_' and '.', starting
/// and ending with a letter or digit). Such a value is also a safe file or directory name.
pub fn label_value(what: &str, s: &str) -> Result<(), Invalid> {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    let ok = match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            s.len() <= 63
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(inner)
        }
        _ => false,
    };
    if !ok {
        return Err(crate::invalid!(
            "{what} '{s}' is not a Kubernetes label value: give 1 to 63 letters, digits, '-', \
             '_' or '.', starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

/// A positive Kubernetes quantity: a decimal number and an optional suffix — binary (`Ki` …
/// `Ei`), decimal (`m`, `k`, `M` … `E`) or an exponent (`e3`, `E-2`), the grammar of
/// apimachinery's `resource.Quantity`. `example` goes into the error (e.g. "500m or 2").
pub fn quantity(what: &str, s: &str, example: &str) -> Result<Quantity, Invalid> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let number_ok = number.bytes().any(|c| c.is_ascii_digit()) && number.matches('.').count() <= 1;
    let positive = number.bytes().any(|c| (b'1'..=b'9').contains(&c));
    let suffix_ok = matches!(
        suffix,
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
    ) || exponent(suffix);
    if !(number_ok && positive && suffix_ok) {
        return Err(crate::invalid!(
            "{what} '{s}' is not a positive Kubernetes quantity: give e.g. {example}"
        ));
    }
    Ok(Quantity(s.to_string()))
}

/// A Kubernetes quantity of bytes in MiB (rounded down), whatever its suffix: binary (`Ki`,
/// `Mi`, `Gi`, `Ti`, `Pi`, `Ei`), decimal (`k`, `M`, `G`, `T`, `P`, `E`: `8G` is 8·10⁹
/// bytes, less than an 8 GiB heap) or none (bytes).
pub fn binary_mib(q: &str) -> Option<u64> {
    const UNITS: [(&str, f64); 12] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let q = q.trim();
    let (n, f) = UNITS
        .iter()
        .find_map(|(suffix, f)| q.strip_suffix(suffix).map(|n| (n, *f)))
        .unwrap_or((q, 1.0));
    let bytes = n
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)?
        * f;
    Some((bytes / 1048576.0) as u64)
}

/// `e3`, `E-2`, `e+6`: a decimal exponent suffix.
fn exponent(s: &str) -> bool {
    let Some(e) = s.strip_prefix(['e', 'E']) else {
        return false;
    };
    let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        for ok in ["a", "cqlbench-loaders", "x1", "1x", &"a".repeat(63)] {
            assert!(dns_label("--name", ok, 63).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", "ä", &"a".repeat(64)] {
            let e = dns_label("--name", bad, 63).unwrap_err();
            assert!(e.contains("is not a DNS-1123 label"), "{bad}: {e}");
            assert!(e.starts_with(&format!("--name '{bad}'")), "{e}");
        }
        assert!(
            dns_label("--name", "abcd", 3)
                .unwrap_err()
                .contains("1 to 3")
        );
    }

    #[test]
    fn dns_subdomains() {
        for ok in ["a", "db-credentials", "a.b-c.d", "fast.ssd"] {
            assert!(dns_subdomain("--secret", ok).is_ok(), "{ok}");
        }
        for bad in ["", ".a", "a.", "a..b", "A", "a_b", "a/b", &"a".repeat(254)] {
            let e = dns_subdomain("--secret", bad).unwrap_err();
            assert!(e.contains("not a DNS-1123 subdomain"), "{bad}: {e}");
        }
    }

    #[test]
    fn label_values() {
        for ok in ["run-20261124-123402", "Run_1.a", "7"] {
            assert!(label_value("--run-id", ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "-a", "a.", "a b", &"a".repeat(64)] {
            let e = label_value("--run-id", bad).unwrap_err();
            assert!(e.contains("not a Kubernetes label value"), "{bad}: {e}");
        }
    }

    #[test]
    fn quantities() {
        for ok in [
            "1", "500m", "0.5", "1.5", ".5", "2Gi", "512Mi", "1G", "100k", "1e3", "1E-2", "5e+1",
        ] {
            assert_eq!(quantity("--cpu", ok, "2").unwrap().0, ok);
        }
        for bad in [
            "", "0", "0.0", "0Gi", "-1", "+1", "1GB", "1gi", "Gi", "1.2.3", "1 Gi", "1e", "e3",
            "1Gi ", "1.5x", ".",
        ] {
            let e = quantity("--memory", bad, "512Mi or 2Gi").unwrap_err();
            assert_eq!(
                e,
                format!(
                    "--memory '{bad}' is not a positive Kubernetes quantity: give e.g. 512Mi or 2Gi"
                )
                .as_str()
            );
        }
    }

    #[test]
    fn a_yaml_stream_separates_documents_after_its_header() {
        let docs = [labels("loader", "r1"), labels("collector", "r1")].map(|l| to_yaml(&l));
        let s = yaml_stream("# two\n", &docs);
        assert!(
            s.starts_with("# two\napp.kubernetes.io/component: loader\n"),
            "{s}"
        );
        let docs: Vec<crate::yaml::Value> = crate::yaml::from_str_multiple(&s).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["app.kubernetes.io/component"], "collector");
        assert_eq!(docs[1]["cqlbench.io/run-id"], "r1");
        assert_eq!(docs[1]["app.kubernetes.io/name"], "cqlbench");
    }
}
