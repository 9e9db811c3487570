//! The error of refused input: a flag's or key's value, a file's content. One line says what was
//! given and what is wrong with it; the same type whether the value came from a flag, a
//! scenario file or a library call, so each is refused the same way.

/// Refused input, with one line saying what and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl From<String> for Invalid {
    fn from(s: String) -> Self {
        Invalid(s)
    }
}

impl From<&str> for Invalid {
    fn from(s: &str) -> Self {
        Invalid(s.to_string())
    }
}

impl std::ops::Deref for Invalid {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<&str> for Invalid {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// `invalid!("'{s}' is not a rate")`: an [`Invalid`] from a format string.
#[macro_export]
macro_rules! invalid {
    ($($t:tt)*) => {
        $crate::error::Invalid(format!($($t)*))
    };
}

/// Why a build without one of the optional features (`k8s`, `tls`: the quickstart's build
/// leaves both out) refuses `what`, which needs `needs`: one wording for every such refusal.
pub fn not_built(what: &str, needs: &str, feature: &str) -> Invalid {
    crate::invalid!(
        "{what} needs {needs}, which is not in this build of cqlbench (built without the \
         `{feature}` feature, as the quickstart's is): build with `cargo build --release`"
    )
}
