//! cassandra-stress user profiles, read unmodified: `keyspace`, `keyspace_definition`,
//! `table`, `table_definition`, `columnspec` (`size`, `population`, `cluster`), `insert`
//! (`partitions`, `select`, `batchtype`), `queries` (`cql`, `fields`), and the
//! `ops(insert=N,QUERY=M,…)` mix. Everything is checked before a cluster is touched; each
//! problem is one line naming the file, the key and what is wrong.
//!
//! Rows are a pure function of numbers: partition `p`'s key columns take values drawn from
//! their `population` by hashing `p`; a partition holds the product of its clustering
//! columns' `cluster` counts; row `r`'s clustering values are digits of `r` in that mixed
//! radix, and every other value is drawn from its column's population by hashing
//! (partition, row, column). So any process, and a later verification, computes the same row.

pub mod check;
pub mod cql;
pub mod dist;
pub mod run;
pub mod values;
pub mod workload;

pub use workload::ProfileWorkload;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use scylla::value::CqlValue;
use serde::Deserialize;

use crate::workload::data::mix;
use cql::{CqlType, Query, Table, Verb};
use dist::{Dist, Ratio};

/// cassandra-stress's defaults for a column without a `columnspec` entry.
pub const DEFAULT_SIZE: &str = "uniform(4..8)";
pub const DEFAULT_POPULATION: &str = "uniform(1..100B)";
pub const DEFAULT_CLUSTER: &str = "fixed(1)";
/// Rows a rampup operation writes, and the most operations one partition takes.
pub const RAMPUP_CHUNK_ROWS: u64 = 16;
pub const RAMPUP_MAX_CHUNKS: u64 = 64;
/// And for `insert:`.
pub const DEFAULT_PARTITIONS: &str = "fixed(1)";
pub const DEFAULT_SELECT: &str = "fixed(1)/1";

/// A profile problem: the file, the key, what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {key}: {what}")]
pub struct ProfileError {
    pub file: PathBuf,
    pub key: String,
    pub what: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub name: String,
    #[serde(default)]
    pub size: Option<Dist>,
    #[serde(default)]
    pub population: Option<Dist>,
    #[serde(default)]
    pub cluster: Option<Dist>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BatchType {
    #[serde(alias = "logged")]
    Logged,
    #[serde(alias = "unlogged")]
    Unlogged,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertSpec {
    #[serde(default)]
    pub partitions: Option<Dist>,
    #[serde(default)]
    pub select: Option<Ratio>,
    #[serde(default)]
    pub batchtype: Option<BatchType>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fields {
    Samerow,
    Multirow,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuerySpec {
    pub cql: String,
    #[serde(default)]
    pub fields: Option<Fields>,
}

/// The file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    pub keyspace: String,
    #[serde(default)]
    pub keyspace_definition: Option<String>,
    pub table: String,
    #[serde(default)]
    pub table_definition: Option<String>,
    #[serde(default)]
    pub extra_definitions: Vec<String>,
    #[serde(default)]
    pub columnspec: Vec<ColumnSpec>,
    #[serde(default)]
    pub insert: InsertSpec,
    #[serde(default)]
    pub queries: BTreeMap<String, QuerySpec>,
}

/// A column with its distributions (the file's or the defaults).
#[derive(Debug, Clone)]
pub struct ProfileColumn {
    pub name: String,
    pub ty: CqlType,
    pub size: Dist,
    pub population: Dist,
    pub cluster: Dist,
    /// Where the column stands in the primary key.
    pub role: Role,
    /// A hash of the name: values of different columns differ.
    name_hash: u64,
}

/// A column's place in the primary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The i-th partition key column.
    Partition(usize),
    /// The i-th clustering column.
    Clustering(usize),
    Value,
}

/// A profile checked against itself: table, columns, queries.
#[derive(Debug, Clone)]
pub struct Profile {
    pub path: PathBuf,
    pub file: ProfileFile,
    pub table: Table,
    /// In table order.
    pub columns: Vec<ProfileColumn>,
    pub queries: BTreeMap<String, Query>,
}

/// An operation mix that does not parse: the text given, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpsError {
    #[error("'{part}' in '{mix}': expected NAME=WEIGHT, e.g. ops(insert=1,simple1=3)")]
    Form { part: String, mix: String },
    #[error("'{part}': the weight must be a whole number")]
    Weight { part: String },
    #[error("'{mix}': '{name}' is given twice")]
    Twice { mix: String, name: String },
    #[error("'{0}': at least one operation needs a positive weight")]
    NoneWeighted(String),
}

/// The operation mix: `ops(insert=1,latest=3)` or `insert=1,latest=3`.
pub fn parse_ops(s: &str) -> Result<BTreeMap<String, u32>, OpsError> {
    let t = s.trim();
    let inner = t
        .strip_prefix("ops(")
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(t);
    let mut out = BTreeMap::new();
    for part in inner.split(',') {
        let (name, w) = part.split_once('=').ok_or_else(|| OpsError::Form {
            part: part.to_string(),
            mix: s.to_string(),
        })?;
        let w: u32 = w.trim().parse().map_err(|_| OpsError::Weight {
            part: part.to_string(),
        })?;
        if out.insert(name.trim().to_string(), w).is_some() {
            return Err(OpsError::Twice {
                mix: s.to_string(),
                name: name.trim().to_string(),
            });
        }
    }
    if out.values().all(|w| *w == 0) {
        return Err(OpsError::NoneWeighted(s.to_string()));
    }
    Ok(out)
}

/// The table's columns in order, each with its role and its `columnspec` distributions (or
/// cassandra-stress's defaults).
fn profile_columns(table: &Table, file: &ProfileFile) -> Vec<ProfileColumn> {
    table
        .columns
        .iter()
        .map(|c| {
            let spec = file.columnspec.iter().find(|s| s.name == c.name);
            let pick = |d: Option<&Dist>, default: &str| {
                d.cloned()
                    .unwrap_or_else(|| default.parse().expect("valid default"))
            };
            let role = match (
                table.partition_key.iter().position(|k| k == &c.name),
                table.clustering.iter().position(|k| k == &c.name),
            ) {
                (Some(i), _) => Role::Partition(i),
                (None, Some(i)) => Role::Clustering(i),
                (None, None) => Role::Value,
            };
            ProfileColumn {
                role,
                name_hash: hash(&c.name),
                name: c.name.clone(),
                ty: c.ty.clone(),
                size: pick(spec.and_then(|s| s.size.as_ref()), DEFAULT_SIZE),
                population: pick(spec.and_then(|s| s.population.as_ref()), DEFAULT_POPULATION),
                cluster: pick(spec.and_then(|s| s.cluster.as_ref()), DEFAULT_CLUSTER),
            }
        })
        .collect()
}

impl Profile {
    /// Reads and checks a profile file.
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let err = |key: &str, what: String| ProfileError {
            file: path.to_path_buf(),
            key: key.to_string(),
            what,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err("file", e.to_string()))?;
        Profile::parse(path, &text)
    }

    /// Checks a profile's text (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Profile, ProfileError> {
        let err = |key: &str, what: String| ProfileError {
            file: path.to_path_buf(),
            key: key.to_string(),
            what,
        };
        let value: crate::yaml::Value =
            crate::yaml::from_str(text).map_err(|e| err("yaml", crate::yaml::first_line(&e)))?;
        let file: ProfileFile = serde_path_to_error::deserialize(value).map_err(|e| {
            let key = e.path().to_string();
            err(&key, e.into_inner().to_string())
        })?;
        let def = file.table_definition.as_deref().ok_or_else(|| {
            err(
                "table_definition",
                "missing: cqlbench needs the CREATE TABLE to know the column types".into(),
            )
        })?;
        let table = Table::parse(def).map_err(|e| err("table_definition", e.to_string()))?;
        if table.name != file.table.to_ascii_lowercase() && table.name != file.table {
            return Err(err(
                "table",
                format!(
                    "'{}', but table_definition creates '{}'",
                    file.table, table.name
                ),
            ));
        }
        for (i, c) in file.columnspec.iter().enumerate() {
            if table.column(&c.name).is_none() {
                return Err(err(
                    &format!("columnspec[{i}].name"),
                    format!("column '{}' is not in table {}", c.name, table.name),
                ));
            }
        }
        let columns = profile_columns(&table, &file);
        // Only the file's own entries can go below 1 (the default is fixed(1)).
        for (i, c) in file.columnspec.iter().enumerate() {
            if let Some(cluster) = &c.cluster
                && table.clustering.contains(&c.name)
                && cluster.min < 1
            {
                return Err(err(
                    &format!("columnspec[{i}].cluster"),
                    format!(
                        "'{cluster}': a partition has at least 1 value of each clustering column"
                    ),
                ));
            }
        }
        // Sizes are counts of bytes or characters and populations value seeds (as in
        // cassandra-stress, whose default is uniform(1..100B) and where 0 is a seed like any
        // other: `uniform(0..3)` is four values), and an insert writes at least one
        // partition: values below refuse the profile.
        for (i, c) in file.columnspec.iter().enumerate() {
            for (key, dist, least) in [("size", &c.size, 0), ("population", &c.population, 0)] {
                if let Some(d) = dist
                    && d.min < least
                {
                    return Err(err(
                        &format!("columnspec[{i}].{key}"),
                        format!("'{d}': a {key} is at least {least}"),
                    ));
                }
            }
        }
        if let Some(p) = &file.insert.partitions
            && p.min < 1
        {
            return Err(err(
                "insert.partitions",
                format!("'{p}': an insert writes at least 1 partition"),
            ));
        }
        let mut queries = BTreeMap::new();
        for (name, q) in &file.queries {
            if name == "insert" {
                return Err(err(
                    "queries.insert",
                    "'insert' is the profile's own write: name the query otherwise".into(),
                ));
            }
            let parsed = Query::parse(&q.cql, &table)
                .map_err(|e| err(&format!("queries.{name}.cql"), e.to_string()))?;
            queries.insert(name.clone(), parsed);
        }
        Ok(Profile {
            path: path.to_path_buf(),
            file,
            table,
            columns,
            queries,
        })
    }

    /// Checks an operation mix against the profile: `insert` and its queries.
    pub fn check_ops(&self, ops: &BTreeMap<String, u32>) -> Result<(), ProfileError> {
        for name in ops.keys() {
            if name != "insert" && !self.queries.contains_key(name) {
                let mut offered = vec!["insert".to_string()];
                offered.extend(self.queries.keys().cloned());
                return Err(ProfileError {
                    file: self.path.clone(),
                    key: "ops".into(),
                    what: format!(
                        "'{name}' is neither insert nor a query of the profile (it offers {})",
                        offered.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }

    /// `--verify` compares what reads return with the generator's rows: refused when the mix
    /// has a query that moves rows away from them (a DELETE, or a write binding values from
    /// several rows).
    pub fn check_verifiable(&self, ops: &BTreeMap<String, u32>) -> Result<(), ProfileError> {
        for name in ops.keys() {
            let Some(q) = self.queries.get(name) else {
                continue;
            };
            let multirow = self.file.queries[name].fields == Some(Fields::Multirow);
            let why = match q.verb {
                Verb::Delete => "deletes rows",
                Verb::Select => continue,
                _ if multirow => "writes values taken from several rows (fields: multirow)",
                _ => continue,
            };
            return Err(ProfileError {
                file: self.path.clone(),
                key: format!("queries.{name}"),
                what: format!(
                    "'{name}' {why}, so rows read back could not be compared with the generator's: leave it out of the mix to verify"
                ),
            });
        }
        Ok(())
    }

    fn column(&self, name: &str) -> &ProfileColumn {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .expect("checked when loaded")
    }

    /// A column's value: drawn from its population by `seed`, then generated from that.
    fn value_of(&self, c: &ProfileColumn, seed: u64) -> CqlValue {
        let pop = c.population.sample(seed, seed) as u64;
        values::value(&c.ty, mix(pop ^ c.name_hash), &c.size)
    }

    /// Rows in partition `p`: the product of its clustering columns' counts.
    pub fn rows_in(&self, p: u64) -> Vec<u64> {
        self.table
            .clustering
            .iter()
            .enumerate()
            .map(|(i, name)| {
                self.column(name)
                    .cluster
                    .sample(mix(p ^ (i as u64 + 1) << 48), p)
                    .max(1) as u64
            })
            .collect()
    }

    /// How rampup splits a partition: (rows per chunk, chunks per partition). A rampup
    /// operation writes one chunk, so a wide partition is many operations, each within the
    /// request timeout; partitions with fewer rows leave their last chunks empty.
    pub fn rampup_chunks(&self) -> (u64, u64) {
        let max_rows = self
            .table
            .clustering
            .iter()
            .map(|name| self.column(name).cluster.max.max(1) as u64)
            .fold(1u64, u64::saturating_mul);
        // 16 rows a chunk, more when that would make over 64 chunks.
        let per_chunk = RAMPUP_CHUNK_ROWS.max(max_rows.div_ceil(RAMPUP_MAX_CHUNKS));
        (per_chunk, max_rows.div_ceil(per_chunk).max(1))
    }

    /// The rows rampup cycle `cycle` writes, over `partitions` partitions: chunk `c mod K` of
    /// partition `c / K` (empty past the end of a narrower partition).
    pub fn rampup_rows(&self, cycle: u64, partitions: u64) -> (u64, std::ops::Range<u64>) {
        let (per_chunk, chunks) = self.rampup_chunks();
        let p = (cycle / chunks) % partitions.max(1);
        let total = self.rows_in(p).iter().product::<u64>().max(1);
        let first = ((cycle % chunks) * per_chunk).min(total);
        (p, first..(first + per_chunk).min(total))
    }

    /// The values of the columns `columns` (indices in table order) in row `r` (0-based,
    /// wrapped) of partition `p`.
    pub fn values(&self, p: u64, r: u64, columns: &[usize]) -> Vec<CqlValue> {
        let radix = self.rows_in(p);
        let total: u64 = radix.iter().product::<u64>().max(1);
        let mut rest = r % total;
        // Clustering digits, the last column fastest.
        let mut digits = vec![0u64; radix.len()];
        for i in (0..radix.len()).rev() {
            digits[i] = rest % radix[i];
            rest /= radix[i];
        }
        let row_seed = mix(mix(p) ^ mix(r % total));
        columns
            .iter()
            .map(|&i| {
                let c = &self.columns[i];
                let seed = match c.role {
                    Role::Partition(i) => mix(p ^ 0xA11CE ^ i as u64),
                    // The prefix of digits down to this level names the clustering value.
                    Role::Clustering(i) => digits[..=i]
                        .iter()
                        .fold(mix(p ^ 0xC1 ^ i as u64), |h, d| mix(h ^ d)),
                    Role::Value => row_seed ^ c.name_hash,
                };
                self.value_of(c, seed)
            })
            .collect()
    }

    /// The index in table order of the column `name`.
    pub fn index_of(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .expect("checked when loaded")
    }

    /// Row `r` (0-based, wrapped) of partition `p`: every column's value, in table order.
    pub fn row(&self, p: u64, r: u64) -> Vec<(String, CqlValue)> {
        let all: Vec<usize> = (0..self.columns.len()).collect();
        let names = self.columns.iter().map(|c| c.name.clone());
        names.zip(self.values(p, r, &all)).collect()
    }

    /// What `cqlbench profile` prints: columns and their distributions, rows per partition,
    /// an insert's size, a sample row and what each query binds.
    pub fn describe(&self, ops: Option<&BTreeMap<String, u32>>) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "profile {}: keyspace {}, table {}",
            self.path.display(),
            self.file.keyspace,
            self.table.name
        );
        self.describe_columns(&mut o);
        self.describe_sizes(&mut o);
        let sample = self.row(0, 0);
        let _ = writeln!(o, "\nsample row (partition 0, row 0):");
        for (name, v) in &sample {
            let _ = writeln!(o, "  {name} = {}", show(v));
        }
        self.describe_queries(&mut o, &sample);
        if let Some(ops) = ops {
            let total: u32 = ops.values().sum();
            let parts: Vec<String> = ops
                .iter()
                .map(|(k, w)| format!("{k} {:.0}%", *w as f64 * 100.0 / total as f64))
                .collect();
            let _ = writeln!(o, "\nops: {}", parts.join(", "));
        }
        o
    }

    /// Each column: its type, its place in the key and its distributions.
    fn describe_columns(&self, o: &mut String) {
        let _ = writeln!(o, "\ncolumns (size, population, cluster):");
        for c in &self.columns {
            let role = if self.table.partition_key.contains(&c.name) {
                "partition key"
            } else if self.table.clustering.contains(&c.name) {
                "clustering"
            } else {
                "value"
            };
            let _ = writeln!(
                o,
                "  {:<16} {:<20} {:<14} size {}, population {}, cluster {}",
                c.name,
                c.ty.to_string(),
                role,
                c.size,
                c.population,
                c.cluster
            );
        }
    }

    /// Rows per partition, a row's bytes, and what an insert writes (means over sampled
    /// partitions and rows).
    fn describe_sizes(&self, o: &mut String) {
        let f = &self.file;
        let parts = 200u64;
        let rows: Vec<u64> = (0..parts)
            .map(|p| self.rows_in(p).iter().product::<u64>().max(1))
            .collect();
        let mean_rows = rows.iter().sum::<u64>() as f64 / parts as f64;
        let mut bytes = 0usize;
        let mut n = 0usize;
        for p in 0..parts {
            for r in 0..rows[p as usize].min(20) {
                bytes += self
                    .row(p, r)
                    .iter()
                    .map(|(_, v)| values::wire_bytes(v))
                    .sum::<usize>();
                n += 1;
            }
        }
        let row_bytes = bytes as f64 / n.max(1) as f64;
        let _ = writeln!(
            o,
            "\nrows per partition: {} to {}, {:.1} on average; a row is {:.0} B of values on average",
            rows.iter().min().unwrap_or(&1),
            rows.iter().max().unwrap_or(&1),
            mean_rows,
            row_bytes
        );
        let partitions = f
            .insert
            .partitions
            .clone()
            .unwrap_or_else(|| DEFAULT_PARTITIONS.parse().expect("valid"));
        let select = f
            .insert
            .select
            .clone()
            .unwrap_or_else(|| DEFAULT_SELECT.parse().expect("valid"));
        let share = (0..1000).map(|s| select.sample(s)).sum::<f64>() / 1000.0;
        let per_insert = partitions.mean() * mean_rows * share;
        let _ = writeln!(
            o,
            "insert: partitions {partitions}, select {select} ({:.0}% of a partition's rows), {} batches: {:.1} rows, about {:.0} B an operation",
            share * 100.0,
            match f.insert.batchtype {
                Some(BatchType::Unlogged) => "UNLOGGED",
                _ => "LOGGED",
            },
            per_insert,
            per_insert * row_bytes
        );
    }

    /// Each query, and what it binds from the sample row.
    fn describe_queries(&self, o: &mut String, sample: &[(String, CqlValue)]) {
        let f = &self.file;
        if !self.queries.is_empty() {
            let _ = writeln!(o, "\nqueries:");
        }
        for (name, q) in &self.queries {
            let fields = match f.queries[name].fields {
                Some(Fields::Multirow) => "multirow",
                _ => "samerow",
            };
            let binds: Vec<String> = q
                .binds
                .iter()
                .map(|b| {
                    let v = sample
                        .iter()
                        .find(|(n, _)| n == b)
                        .map(|(_, v)| show(v))
                        .unwrap_or_default();
                    format!("{b} = {v}")
                })
                .collect();
            let _ = writeln!(
                o,
                "  {name} ({fields}{}): {}\n    binds {}",
                if q.lwt {
                    ", lightweight transaction"
                } else {
                    ""
                },
                f.queries[name].cql.trim(),
                if binds.is_empty() {
                    "nothing".to_string()
                } else {
                    binds.join(", ")
                }
            );
        }
    }
}

/// A value as the CQL literal that writes it, long ones cut to their start and size.
fn show(v: &CqlValue) -> String {
    crate::workload::literal::cql_literal_short(v, 60)
}

/// A stable hash of a name.
fn hash(s: &str) -> u64 {
    s.bytes()
        .fold(0xCBF2_9CE4_8422_2325, |h, b| mix(h ^ u64::from(b)))
}

#[cfg(test)]
mod tests;
