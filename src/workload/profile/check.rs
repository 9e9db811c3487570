//! `--verify` for profiles: the rows a query returned, identified by their key columns among
//! the rows the generator writes, and compared with them.
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

use super::cql::{CqlType, Query};
use super::{Fields, Profile, Role};
use crate::workload::check::{Verdict, column, mismatch, missing, show};

/// Partitions past this many rows are not indexed: their rows go unchecked.
const MAX_INDEXED_ROWS: u64 = 100_000;
/// Partition indexes kept between reads.
const CACHED_PARTITIONS: usize = 512;

/// The row id `--verify` knows a profile row by.
pub fn row_id(p: u64, r: u64) -> u64 {
    (p << 32) | (r & 0xFFFF_FFFF)
}

/// Equal as stored: sets and maps whatever their order, empty collections as null.
pub fn same(want: &CqlValue, got: Option<&CqlValue>) -> bool {
    let Some(got) = got else {
        return matches!(want, CqlValue::List(v) | CqlValue::Set(v) if v.is_empty())
            || matches!(want, CqlValue::Map(m) if m.is_empty());
    };
    match (want, got) {
        (CqlValue::Set(a), CqlValue::Set(b)) => {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        }
        (CqlValue::Map(a), CqlValue::Map(b)) => {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        }
        _ => want == got,
    }
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
    // Every row returned is in `p`'s partition key when the query fixes all of it.
    let in_partition = t.partition_key.iter().all(binds_eq);
    let returns = |c: usize| names.iter().any(|n| *n == profile.columns[c].name);
    let pk_values = profile.values(p, 0, &index.partition_key);
    let one_row = r.filter(|_| fields == Fields::Samerow && t.clustering.iter().all(binds_eq));
    let label = |(q, r): (u64, u64)| format!("{q}/{r}");
    let mut compared = 0u64;
    let mut seen_r = false;
    for row in rows {
        // Its partition: `p`'s key, or a row of another partition (an index lookup).
        let mut other = false;
        for (k, &c) in index.partition_key.iter().enumerate() {
            if let Some(got) = column(names, row, &profile.columns[c].name)
                && *got != pk_values[k]
            {
                other = true;
            }
        }
        if other || (!in_partition && !index.partition_key.iter().all(|&c| returns(c))) {
            continue;
        }
        // Its candidates among the generator's rows.
        let candidates: Vec<(u64, u64)> = if index.clustering.is_empty() {
            index
                .partitions_like(profile, p)
                .into_iter()
                .map(|q| (q, 0))
                .collect()
        } else if index.clustering.iter().all(|&c| returns(c)) {
            let key: Vec<CqlValue> = index
                .clustering
                .iter()
                .map(|&c| {
                    column(names, row, &profile.columns[c].name)
                        .cloned()
                        .unwrap_or(CqlValue::Empty)
                })
                .collect();
            let Some(by_key) = index.rows(profile, p) else {
                continue;
            };
            match by_key.get(&key_text(&key)) {
                Some(c) => c.clone(),
                None => {
                    return mismatch(
                        op,
                        format!("{p}/?"),
                        &profile.columns[index.clustering[0]].name,
                        "a clustering key the generator writes in this partition".into(),
                        show(key.first()),
                    );
                }
            }
        } else if let Some(r) = one_row {
            // Its key fixed by the query: the generator rows with that key.
            index
                .sharing_key(profile, p, r)
                .unwrap_or_else(|| vec![(p, r)])
        } else {
            continue;
        };
        if candidates.contains(&(p, r.unwrap_or(u64::MAX))) {
            seen_r = true;
        }
        // The returned value columns against each candidate's.
        let mut first_difference = None;
        let matched = candidates.iter().any(|&(cq, cr)| {
            let want = profile.values(cq, cr, &index.values);
            for (k, &c) in index.values.iter().enumerate() {
                let name = &profile.columns[c].name;
                if !names.contains(name) {
                    continue;
                }
                let got = column(names, row, name);
                let ok = match (&profile.columns[c].ty, &want[k], got) {
                    (CqlType::Counter, CqlValue::Counter(d), Some(CqlValue::Counter(n))) => {
                        counter_fits(profile, &candidates, c, d.0, n.0)
                    }
                    _ => same(&want[k], got),
                };
                if !ok {
                    first_difference.get_or_insert_with(|| {
                        (
                            label((cq, cr)),
                            name.clone(),
                            show(Some(&want[k])),
                            show(got),
                        )
                    });
                    return false;
                }
            }
            true
        });
        if !matched {
            let (row, col, want, got) = first_difference.expect("a candidate differed");
            return mismatch(op, row, &col, want, got);
        }
        compared += 1;
    }
    // A query that fixes one row by equalities must return it, once it is known written
    // (unless its LIMIT cut the result).
    if let Some(r) = r
        && fields == Fields::Samerow
        && q.only_equalities
        && q.limit.is_none_or(|l| (rows.len() as u64) < l)
        && !seen_r
        && knows(row_id(p, r))
        // A row whose key another generator row shares may hold that row's values, and a
        // query on a value column would then not find it.
        && index
            .sharing_key(profile, p, r)
            .is_some_and(|rows| rows == [(p, r)])
        && (in_partition || index.partition_key.iter().all(|&c| returns(c)))
        && (index.clustering.is_empty()
            || index.clustering.iter().all(|&c| returns(c))
            || one_row.is_some())
    {
        return missing(op, label((p, r)));
    }
    if compared == 0 {
        Verdict::Unchecked
    } else {
        Verdict::Matched(compared)
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
