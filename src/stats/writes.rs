//! Write cycles by operation kind and outcome, as compressed bitmaps: what each worker records
//! per interval beside its histograms, merged like them, and appended to the run's ledger
//! ([`crate::result::ledger`]).

use std::collections::BTreeMap;

use roaring::RoaringTreemap;

use crate::spec::OpKind;

/// What became of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The cluster acknowledged it at the write consistency level.
    Acked,
    /// It failed or timed out: it may or may not have been applied.
    Unknown,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Acked => "acked",
            Outcome::Unknown => "unknown",
        }
    }
}

/// Write cycles by operation kind and outcome: what one worker saw in one interval, or the
/// merge of several. Part of [`super::Snapshot`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Writes {
    pub by: BTreeMap<(OpKind, Outcome), RoaringTreemap>,
}

impl Writes {
    /// Notes that write `cycle` of kind `op` ended with `outcome`.
    #[inline]
    pub fn record(&mut self, op: OpKind, cycle: u64, outcome: Outcome) {
        self.by.entry((op, outcome)).or_default().insert(cycle);
    }

    pub fn add(&mut self, other: &Writes) {
        for (k, b) in &other.by {
            *self.by.entry(*k).or_default() |= b;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by.values().all(RoaringTreemap::is_empty)
    }

    pub fn clear(&mut self) {
        self.by.clear();
    }
}
