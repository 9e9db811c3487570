//! Profile rows checked (`--verify`'s reads, `verify`'s read-back): the rows a query returned,
//! identified by their key columns among the rows the generator writes, and compared with them
//! ([`crate::workload::check::first_difference`]).
//!
//! Keys drawn from a population can collide: two partitions (or two rows of one) may get the
//! same key, and the table then holds one row where the generator has several (the last
//! write's content, and for counters the sum of both rows' increments). A returned row is
//! therefore compared with every generator row of its key and matches if it equals any of
//! them; a counter must be a positive multiple of its row's increment (or, with colliding
//! rows of different increments, at least the smallest).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use scylla::value::{CqlValue, Row};

use super::cql::Query;
use super::{Fields, Profile, Role};
pub use crate::workload::check::same;
use crate::workload::check::{
    Difference, RowId, Unchecked, Verdict, column, first_difference, mismatch, missing, show,
};

/// Partitions past this many rows are not indexed: their rows go unchecked.
const MAX_INDEXED_ROWS: u64 = 100_000;
/// Partition indexes kept between reads.
const CACHED_PARTITIONS: usize = 512;

/// The id both verifiers know row `r` of partition `p` by.
pub fn row_id(p: u64, r: u64) -> RowId {
    (p << 32) | (r & 0xFFFF_FFFF)
}

/// The partitions sharing a partition key, and per partition key the rows of its
/// partitions by clustering key: what a returned row is looked up in.
#[derive(Debug)]
pub struct RowIndex {
    /// Partition key (as text) → the partitions that have it, where more than one does.
    aliases: HashMap<String, Vec<u64>>,
    partition_key: Vec<usize>,
    clustering: Vec<usize>,
    values: Vec<usize>,
    cache: Mutex<HashMap<u64, Arc<Rows>>>,
}

/// A partition key's rows: clustering key (as text) → (partition, row) pairs.
type Rows = HashMap<String, Vec<(u64, u64)>>;

fn key_text(v: &[CqlValue]) -> String {
    format!("{v:?}")
}

impl RowIndex {
    /// Indexes the partition keys of partitions `0..partitions`.
    pub fn new(profile: &Profile, partitions: u64) -> RowIndex {
        let of = |f: fn(&Role) -> bool| -> Vec<usize> {
            let mut v: Vec<(usize, usize)> = profile
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| f(&c.role))
                .map(|(i, c)| {
                    let order = match c.role {
                        Role::Partition(k) | Role::Clustering(k) => k,
                        Role::Value => i,
                    };
                    (order, i)
                })
                .collect();
            v.sort_unstable();
            v.into_iter().map(|(_, i)| i).collect()
        };
        let partition_key = of(|r| matches!(r, Role::Partition(_)));
        let mut all: HashMap<String, Vec<u64>> = HashMap::new();
        for p in 0..partitions {
            all.entry(key_text(&profile.values(p, 0, &partition_key)))
                .or_default()
                .push(p);
        }
        all.retain(|_, v| v.len() > 1);
        RowIndex {
            aliases: all,
            clustering: of(|r| matches!(r, Role::Clustering(_))),
            values: of(|r| matches!(r, Role::Value)),
            partition_key,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The partitions with partition `p`'s key (`p` first).
    fn partitions_like(&self, profile: &Profile, p: u64) -> Vec<u64> {
        if self.aliases.is_empty() {
            return vec![p];
        }
        let key = key_text(&profile.values(p, 0, &self.partition_key));
        match self.aliases.get(&key) {
            Some(v) => std::iter::once(p)
                .chain(v.iter().copied().filter(|&q| q != p))
                .collect(),
            None => vec![p],
        }
    }

    /// The generator's rows stored under row `r` of partition `p`'s key: itself, and others
    /// whose keys collide with it (None: the partition is too wide to index).
    pub fn sharing_key(&self, profile: &Profile, p: u64, r: u64) -> Option<Vec<(u64, u64)>> {
        if self.clustering.is_empty() {
            return Some(
                self.partitions_like(profile, p)
                    .into_iter()
                    .map(|q| (q, 0))
                    .collect(),
            );
        }
        let key = key_text(&profile.values(p, r, &self.clustering));
        self.rows(profile, p)
            .map(|rows| rows.get(&key).cloned().unwrap_or_default())
    }

    /// The rows of `p`'s partition key by clustering key (None: too many to index).
    fn rows(&self, profile: &Profile, p: u64) -> Option<Arc<Rows>> {
        if let Some(r) = self.cache.lock().expect("index cache").get(&p) {
            return Some(r.clone());
        }
        let mut rows: Rows = HashMap::new();
        let mut n = 0u64;
        for q in self.partitions_like(profile, p) {
            let total = profile.rows_in(q).iter().product::<u64>().max(1);
            n += total;
            if n > MAX_INDEXED_ROWS {
                return None;
            }
            for r in 0..total {
                rows.entry(key_text(&profile.values(q, r, &self.clustering)))
                    .or_default()
                    .push((q, r));
            }
        }
        let rows = Arc::new(rows);
        let mut cache = self.cache.lock().expect("index cache");
        if cache.len() >= CACHED_PARTITIONS {
            cache.clear();
        }
        cache.insert(p, rows.clone());
        Some(rows)
    }
}

/// Checks the rows query `q` (named `op`) returned for partition `p` (and row `r` when every
/// marker was bound from one row) against the generator.
#[allow(clippy::too_many_arguments)]
pub fn check_rows(
    profile: &Profile,
    index: &RowIndex,
    op: &str,
    q: &Query,
    fields: Fields,
    p: u64,
    r: Option<u64>,
    names: &[String],
    rows: &[Row],
    knows: &dyn Fn(u64) -> bool,
) -> Verdict {
    let t = &profile.table;
    let binds_eq = |c: &String| q.equal.contains(c);
    let read = Read {
        profile,
        index,
        p,
        names,
        // Every row returned is in `p`'s partition key when the query fixes all of it.
        in_partition: t.partition_key.iter().all(binds_eq),
        one_row: r.filter(|_| fields == Fields::Samerow && t.clustering.iter().all(binds_eq)),
    };
    let mut compared = 0u64;
    let mut seen_r = false;
    for row in rows {
        let candidates = match read.candidates(row) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(key) => {
                return mismatch(
                    op,
                    format!("{p}/?"),
                    &profile.columns[index.clustering[0]].name,
                    "a clustering key the generator writes in this partition".into(),
                    show(key.first()),
                );
            }
        };
        if candidates.contains(&(p, r.unwrap_or(u64::MAX))) {
            seen_r = true;
        }
        if let Some((row, d)) = read.unlike(&candidates, row) {
            return mismatch(op, row, &d.column, d.expected, d.found);
        }
        compared += 1;
    }
    // A query that fixes one row by equalities must return it, once it is known written
    // (unless its LIMIT cut the result).
    let must = r.filter(|&r| {
        fields == Fields::Samerow
            && q.only_equalities
            && q.limit.is_none_or(|l| (rows.len() as u64) < l)
            && !seen_r
            && read.would_return(r)
    });
    if let Some(r) = must
        && knows(row_id(p, r))
    {
        return missing(op, format!("{p}/{r}"));
    }
    if compared > 0 {
        Verdict::Matched(compared)
    } else if !rows.is_empty() {
        Verdict::Unchecked(Unchecked::Unidentified)
    } else if must.is_some() {
        Verdict::Unchecked(Unchecked::NotYetWritten)
    } else {
        Verdict::Unchecked(Unchecked::NoRowRequired)
    }
}

/// A read of partition `p`'s key, and what it returned.
struct Read<'a> {
    profile: &'a Profile,
    index: &'a RowIndex,
    p: u64,
    names: &'a [String],
    /// The query fixes the whole partition key.
    in_partition: bool,
    /// The row every marker was bound from, when the query fixes all of its key.
    one_row: Option<u64>,
}

impl Read<'_> {
    /// Whether the read returns column `c`.
    fn returns(&self, c: usize) -> bool {
        self.names
            .iter()
            .any(|n| *n == self.profile.columns[c].name)
    }

    /// The generator rows a returned row may be (Ok(None): not one this read can tell; Err:
    /// a clustering key the generator never writes in the partition).
    fn candidates(&self, row: &Row) -> Result<Option<Vec<(u64, u64)>>, Vec<CqlValue>> {
        let (profile, index, p) = (self.profile, self.index, self.p);
        // Its partition: `p`'s key, or a row of another partition (an index lookup).
        let pk_values = profile.values(p, 0, &index.partition_key);
        let other = index.partition_key.iter().enumerate().any(|(k, &c)| {
            column(self.names, row, &profile.columns[c].name)
                .is_some_and(|got| *got != pk_values[k])
        });
        let key_returned = index.partition_key.iter().all(|&c| self.returns(c));
        if other || (!self.in_partition && !key_returned) {
            return Ok(None);
        }
        if index.clustering.is_empty() {
            let all = index
                .partitions_like(profile, p)
                .into_iter()
                .map(|q| (q, 0));
            return Ok(Some(all.collect()));
        }
        if index.clustering.iter().all(|&c| self.returns(c)) {
            let key: Vec<CqlValue> = index
                .clustering
                .iter()
                .map(|&c| {
                    column(self.names, row, &profile.columns[c].name)
                        .cloned()
                        .unwrap_or(CqlValue::Empty)
                })
                .collect();
            let Some(by_key) = index.rows(profile, p) else {
                return Ok(None);
            };
            return match by_key.get(&key_text(&key)) {
                Some(c) => Ok(Some(c.clone())),
                None => Err(key),
            };
        }
        // Its key fixed by the query: the generator rows with that key.
        Ok(self.one_row.map(|r| {
            index
                .sharing_key(profile, p, r)
                .unwrap_or_else(|| vec![(p, r)])
        }))
    }

    /// None when the returned row's value columns equal one candidate's; else the first
    /// candidate's label and its first difference.
    fn unlike(&self, candidates: &[(u64, u64)], row: &Row) -> Option<(String, Difference)> {
        let (profile, index) = (self.profile, self.index);
        let fits = |name: &str, want: &CqlValue, got: Option<&CqlValue>| match (want, got) {
            (CqlValue::Counter(d), Some(CqlValue::Counter(n))) => {
                counter_fits(profile, candidates, profile.index_of(name), d.0, n.0)
            }
            _ => same(want, got),
        };
        let mut first = None;
        for &(cq, cr) in candidates {
            let want = profile.values(cq, cr, &index.values);
            let image = index
                .values
                .iter()
                .map(|&c| profile.columns[c].name.as_str())
                .zip(&want);
            match first_difference(self.names, row, image, fits) {
                None => return None,
                Some(d) => {
                    first.get_or_insert((format!("{cq}/{cr}"), d));
                }
            }
        }
        Some(first.expect("a row has at least one candidate"))
    }

    /// Row `r` would be among what the read returned, had it been stored as the generator
    /// wrote it.
    fn would_return(&self, r: u64) -> bool {
        let (profile, index, p) = (self.profile, self.index, self.p);
        // A row whose key another generator row shares may hold that row's values, and a
        // query on a value column would then not find it.
        index
            .sharing_key(profile, p, r)
            .is_some_and(|rows| rows == [(p, r)])
            && (self.in_partition || index.partition_key.iter().all(|&c| self.returns(c)))
            && (index.clustering.is_empty()
                || index.clustering.iter().all(|&c| self.returns(c))
                || self.one_row.is_some())
    }
}

/// A counter read back as `n` where the row's increment is `d`: a positive multiple of it,
/// or with colliding rows of other increments, at least the smallest of them.
fn counter_fits(profile: &Profile, candidates: &[(u64, u64)], c: usize, d: i64, n: i64) -> bool {
    let deltas: Vec<i64> = candidates
        .iter()
        .filter_map(|&(q, r)| match profile.values(q, r, &[c]).pop() {
            Some(CqlValue::Counter(x)) => Some(x.0),
            _ => None,
        })
        .collect();
    if deltas.iter().all(|&x| x == d) {
        d > 0 && n >= d && n % d == 0
    } else {
        n >= deltas.iter().copied().min().unwrap_or(d)
    }
}
