//! The workload spec: which built-in workload, its schema and data knobs, the operation mix
//! and consistency levels.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Built-in workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Single-row writes and reads by key.
    Keyvalue,
    /// Partitions of up to `partsize` rows; row writes and reads of row slices (reference 000).
    Tabular,
    /// Time series per device: writes of readings, reads of recent windows (reference 002).
    Iot,
    /// cassandra-stress's default `standard1` row (a 10-byte key, five 34-byte blobs):
    /// writes, reads by key, range reads (reference 001).
    Stress,
    /// NoSQLBench's `cql-tabular2` row (reference 000): text key and clustering column,
    /// eight text fields of 9-11 … 306-374 characters (~865 B); row writes, slice reads.
    #[serde(rename = "nb-tabular2")]
    NbTabular2,
    /// NoSQLBench's `cql-iot` row (reference 002): (machine uuid, sensor text) partitions
    /// clustered by timestamp, a double, a station uuid and 800-1,200 characters of text.
    #[serde(rename = "nb-iot")]
    NbIot,
    /// A cassandra-stress user profile (`--profile FILE --ops MIX`).
    Profile,
}

impl WorkloadKind {
    /// A reference shape fixes its row: value size and column count are not knobs.
    pub fn fixed_row(self) -> bool {
        matches!(
            self,
            WorkloadKind::NbTabular2 | WorkloadKind::NbIot | WorkloadKind::Profile
        )
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WorkloadKind::Keyvalue => "keyvalue",
            WorkloadKind::Tabular => "tabular",
            WorkloadKind::Iot => "iot",
            WorkloadKind::Stress => "stress",
            WorkloadKind::NbTabular2 => "nb-tabular2",
            WorkloadKind::NbIot => "nb-iot",
            WorkloadKind::Profile => "profile",
        })
    }
}

/// Operation kinds across workloads: the built-ins' three, and the named operations of a
/// user profile (`insert` and its queries). Persisted as the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    Write,
    Read,
    /// Range / slice read (several rows).
    Range,
    /// A user profile's operation.
    Named(OpName),
}

/// A profile operation's name, interned (operation kinds are `Copy` and compared in the
/// executor's hot path), and whether it changes data.
#[derive(Debug, Clone, Copy)]
pub struct OpName {
    name: &'static str,
    writes: bool,
}

impl PartialEq for OpName {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
    }
}
impl Eq for OpName {}
impl PartialOrd for OpName {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OpName {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.name.cmp(o.name)
    }
}
impl std::hash::Hash for OpName {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

/// Names seen so far and whether they write: each name is leaked once.
static NAMES: std::sync::Mutex<BTreeMap<String, OpName>> = std::sync::Mutex::new(BTreeMap::new());

/// Built-in operations beyond write, read and range (the keyvalue workload's): kept as named
/// kinds, like a profile's, so they take no place in the statistics of runs without them.
pub const MORE_OPS: [&str; 4] = ["delete", "lwt", "batch", "counter"];

impl OpKind {
    pub const ALL: [OpKind; 3] = [OpKind::Write, OpKind::Read, OpKind::Range];

    /// write, read or range by name (or their short forms).
    fn core(s: &str) -> Option<OpKind> {
        match s {
            "write" | "w" => Some(OpKind::Write),
            "read" | "r" => Some(OpKind::Read),
            "range" | "scan" => Some(OpKind::Range),
            _ => None,
        }
    }

    /// A name interned once, with whether it writes.
    fn intern(name: &str, writes: bool) -> OpKind {
        let mut names = NAMES.lock().expect("op names");
        let e = names.entry(name.to_string()).or_insert_with(|| OpName {
            name: Box::leak(name.to_string().into_boxed_str()),
            writes,
        });
        e.writes |= writes;
        OpKind::Named(*e)
    }

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Write => "write",
            OpKind::Read => "read",
            OpKind::Range => "range",
            OpKind::Named(n) => n.name,
        }
    }

    /// Changes data: its outcomes go to the acknowledged-write ledger.
    pub fn writes(self) -> bool {
        match self {
            OpKind::Write => true,
            OpKind::Read | OpKind::Range => false,
            OpKind::Named(n) => n.writes,
        }
    }

    /// A profile operation (a built-in's name gives the built-in). `writes` is remembered
    /// for the name: a later lookup of it by name alone ([`OpKind::named`]) keeps it.
    pub fn profile_op(name: &str, writes: bool) -> OpKind {
        if let Some(k) = OpKind::core(name) {
            return k;
        }
        OpKind::intern(name, writes)
    }

    /// Any kind by its persisted name: a built-in, or a profile operation.
    pub fn named(name: &str) -> OpKind {
        let known = NAMES.lock().expect("op names").get(name).copied();
        match known {
            Some(n) => OpKind::Named(n),
            None => OpKind::profile_op(name, MORE_OPS.contains(&name)),
        }
    }
}

impl Serialize for OpKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for OpKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(OpKind::named(&s))
    }
}

impl FromStr for OpKind {
    type Err = crate::error::Invalid;
    /// The built-in kinds (a ratio or a criterion names one of them).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(k) = OpKind::core(s) {
            return Ok(k);
        }
        if MORE_OPS.contains(&s) {
            // Every one of them changes data.
            return Ok(OpKind::intern(s, true));
        }
        Err(crate::invalid!(
            "unknown operation '{s}': use write, read, range, delete, lwt, batch or counter"
        ))
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Weights of the operation kinds, e.g. `write=5,read=5` or `write=10,read=10,range=1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ratio(pub BTreeMap<OpKind, u32>);

impl Ratio {
    /// Whether the mix has the operation named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.0.keys().any(|k| k.name() == name)
    }

    pub fn total(&self) -> u32 {
        self.0.values().sum()
    }

    /// The operation for a draw `x` in `0..total()`.
    pub fn pick(&self, x: u32) -> OpKind {
        let mut acc = 0;
        for (&k, &w) in &self.0 {
            acc += w;
            if x < acc {
                return k;
            }
        }
        *self
            .0
            .keys()
            .next_back()
            .expect("a ratio has at least one operation")
    }
}

impl FromStr for Ratio {
    type Err = crate::error::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut m = BTreeMap::new();
        for part in s.split(',') {
            let (k, w) = part.split_once(['=', ':']).ok_or_else(|| {
                format!("'{part}' in '{s}': expected OP=WEIGHT, e.g. write=5,read=5")
            })?;
            let w: u32 = w
                .trim()
                .parse()
                .map_err(|_| crate::invalid!("'{part}': weight must be a whole number"))?;
            if w > 0 {
                m.insert(k.parse()?, w);
            }
        }
        if m.is_empty() {
            return Err(crate::invalid!(
                "'{s}': at least one operation needs a positive weight"
            ));
        }
        Ok(Ratio(m))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, w)| format!("{k}={w}")).collect();
        f.write_str(&parts.join(","))
    }
}

/// CQL consistency levels accepted on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[value(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Cl {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    LocalOne,
}

impl fmt::Display for Cl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use clap::ValueEnum;
        let v = self.to_possible_value().expect("no variant is skipped");
        f.write_str(v.get_name())
    }
}

impl Cl {
    pub fn to_driver(self) -> scylla::statement::Consistency {
        use scylla::statement::Consistency as C;
        match self {
            Cl::Any => C::Any,
            Cl::One => C::One,
            Cl::Two => C::Two,
            Cl::Three => C::Three,
            Cl::Quorum => C::Quorum,
            Cl::All => C::All,
            Cl::LocalQuorum => C::LocalQuorum,
            Cl::EachQuorum => C::EachQuorum,
            Cl::LocalOne => C::LocalOne,
        }
    }
}

/// A workload and its knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub schema_version: u32,
    pub kind: WorkloadKind,
    pub keyspace: String,
    /// Replication per data centre (NetworkTopologyStrategy).
    pub replication: BTreeMap<String, u32>,
    /// Distinct rows written by rampup (and read by reads): the key space.
    pub rows: u64,
    /// Rows per partition (tabular) / readings per device window (iot).
    pub partsize: u64,
    /// Bytes per value column.
    pub value_size: usize,
    /// Value columns per row (stress).
    pub columns: usize,
    pub ratio: Ratio,
    /// How the main phase picks keys (absent in results written before it existed: uniform).
    #[serde(default)]
    pub key_dist: crate::spec::KeyDist,
    pub write_cl: Cl,
    pub read_cl: Cl,
    /// Extra table options, e.g. `compaction = {'class': 'LeveledCompactionStrategy'}`.
    pub table_options: Option<String>,
    /// The user profile a `profile` workload runs, as read (the result carries it whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileSource>,
    /// `--verify`: the main phase's reads compare what they got with the generator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_reads: bool,
}

/// A user profile as the run read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSource {
    pub path: std::path::PathBuf,
    pub text: String,
}

impl WorkloadSpec {
    /// Refuses values no workload can run with, in one line naming the flag (or key) that
    /// sets it (which operations a kind offers is checked by the workload itself).
    pub fn check(&self) -> Result<(), crate::error::Invalid> {
        let no = |why: &str| Err(crate::error::Invalid(why.to_string()));
        if self.rows == 0 {
            return no("--rows must be at least 1");
        }
        // A profile's partitions and columns come from its columnspec.
        if self.kind != WorkloadKind::Profile {
            if self.partsize == 0 {
                return no("--partsize must be at least 1");
            }
            if self.columns == 0 {
                return no("--columns must be at least 1");
            }
        }
        if let Some((dc, _)) = self.replication.iter().find(|(_, rf)| **rf == 0) {
            return Err(crate::invalid!(
                "--rf {dc}:0: the keyspace needs at least one replica in every data centre it names"
            ));
        }
        parse_keyspace(&self.keyspace)?;
        if self.ratio.0.values().all(|w| *w == 0) {
            return no("--ratio: give at least one operation a weight above 0");
        }
        Ok(())
    }

    /// The workload as reports name it: its kind, and its key distribution unless uniform.
    pub fn label(&self) -> String {
        let kind = match &self.profile {
            Some(p) => format!(
                "profile {}",
                p.path.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => self.kind.to_string(),
        };
        match self.key_dist {
            crate::spec::KeyDist::Uniform => kind,
            d => format!("{kind} ({d} keys)"),
        }
    }
}

/// Version of the persisted workload spec.
pub const WORKLOAD_SPEC_VERSION: u32 = 1;

impl WorkloadSpec {
    /// The defaults of a built-in workload (ratio as in its reference article).
    pub fn defaults(kind: WorkloadKind) -> WorkloadSpec {
        let (ratio, partsize, value_size, columns) = match kind {
            WorkloadKind::Keyvalue => ("write=5,read=5", 1, 100, 1),
            WorkloadKind::Tabular => ("write=5,range=5", 5000, 100, 1),
            WorkloadKind::Iot => ("write=7,range=3", 10, 50, 1),
            // cassandra-stress's defaults: -col size=FIXED(34) n=FIXED(5).
            WorkloadKind::Stress => ("write=10,read=10,range=1", 1, 34, 5),
            // The mean bytes of the row's values (not a knob: `fixed_row`).
            WorkloadKind::NbTabular2 => ("write=5,range=5", 5000, 865, 8),
            WorkloadKind::NbIot => ("write=7,range=3", 10, 1045, 6),
            // Replaced by the profile's own mix and rows.
            WorkloadKind::Profile => ("write=1", 1, 0, 0),
        };
        WorkloadSpec {
            schema_version: WORKLOAD_SPEC_VERSION,
            kind,
            keyspace: "cqlbench".into(),
            replication: BTreeMap::from([("dc1".to_string(), 1)]),
            rows: 100_000,
            partsize,
            value_size,
            columns,
            ratio: ratio.parse().expect("built-in ratios parse"),
            key_dist: Default::default(),
            write_cl: Cl::LocalQuorum,
            read_cl: Cl::LocalQuorum,
            table_options: None,
            profile: None,
            verify_reads: false,
        }
    }
}

/// `--rf`: replicas in the data centre the client is in (`3`: a local cluster's first, else
/// the contact point's), or per data centre (`dc1:3,dc2:1`, NetworkTopologyStrategy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rf {
    Local(u32),
    PerDc(BTreeMap<String, u32>),
}

impl Rf {
    /// Replicas per data centre, a bare RF as dc1's ([`parse_replication`]'s reading).
    pub fn per_dc(&self) -> BTreeMap<String, u32> {
        match self {
            Rf::Local(n) => BTreeMap::from([("dc1".to_string(), *n)]),
            Rf::PerDc(m) => m.clone(),
        }
    }
}

impl FromStr for Rf {
    type Err = crate::error::Invalid;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().parse::<u32>() {
            Ok(0) => Err(crate::invalid!(
                "'{s}': the keyspace needs at least one replica"
            )),
            Ok(n) => Ok(Rf::Local(n)),
            Err(_) => parse_replication(s).map(Rf::PerDc),
        }
    }
}

impl fmt::Display for Rf {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Rf::Local(n) => write!(f, "{n}"),
            Rf::PerDc(m) => {
                let parts: Vec<String> = m.iter().map(|(dc, n)| format!("{dc}:{n}")).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

/// `--rf`'s parser.
pub fn parse_rf(s: &str) -> Result<Rf, crate::error::Invalid> {
    s.parse()
}

/// Parses replication `3` (dc1:3) or `dc1:3,dc2:1`.
pub fn parse_replication(s: &str) -> Result<BTreeMap<String, u32>, crate::error::Invalid> {
    if let Ok(n) = s.trim().parse::<u32>() {
        return Ok(BTreeMap::from([("dc1".to_string(), n)]));
    }
    let mut out = BTreeMap::new();
    for p in s.split(',') {
        let (dc, n) = p
            .split_once(':')
            .ok_or_else(|| crate::invalid!("'{s}': expected RF or DC:RF,… e.g. dc1:3,dc2:1"))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| crate::invalid!("'{p}': RF must be a whole number"))?;
        let dc = dc.trim();
        if dc.is_empty() {
            return Err(crate::invalid!("'{p}': no data centre name before ':'"));
        }
        if out.insert(dc.to_string(), n).is_some() {
            return Err(crate::invalid!("'{s}': data centre '{dc}' is given twice"));
        }
    }
    Ok(out)
}

/// A keyspace name CQL takes unquoted: a letter, then up to 47 letters, digits or '_'.
pub fn parse_keyspace(s: &str) -> Result<String, crate::error::Invalid> {
    let ok = s.len() <= 48
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(s.to_string())
    } else {
        Err(crate::invalid!(
            "'{s}' is not a keyspace name: a letter, then up to 47 letters, digits or '_'"
        ))
    }
}

/// A contact point `host` or `host:port` (port 1-65535; an IPv6 address in brackets when it
/// has a port, e.g. `[::1]:9042`).
pub fn parse_host(s: &str) -> Result<String, crate::error::Invalid> {
    let t = s.trim();
    let bad = |why: &str| crate::invalid!("'{s}' is not a contact point: {why}");
    if t.is_empty() {
        return Err(bad("empty"));
    }
    let port = if let Some(rest) = t.strip_prefix('[') {
        let (_, after) = rest.split_once(']').ok_or_else(|| bad("no closing ']'"))?;
        after.strip_prefix(':')
    } else if t.matches(':').count() == 1 {
        t.split_once(':').map(|(_, p)| p)
    } else {
        None
    };
    if let Some(p) = port {
        match p.parse::<u16>() {
            Ok(n) if n > 0 => {}
            _ => return Err(bad("the port must be a number from 1 to 65535")),
        }
    }
    Ok(t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyspaces_and_contact_points_are_checked() {
        assert_eq!(parse_keyspace("cqlbench_2").unwrap(), "cqlbench_2");
        for bad in ["bad name!", "1ks", "", "a-b", &"k".repeat(49)] {
            assert!(parse_keyspace(bad).is_err(), "{bad}");
        }
        for ok in [
            "10.0.0.1",
            "10.0.0.1:9042",
            "db.example",
            "[::1]:9042",
            "::1",
        ] {
            assert_eq!(parse_host(ok).unwrap(), ok);
        }
        assert!(
            parse_host("127.0.0.1:99999")
                .unwrap_err()
                .contains("1 to 65535")
        );
        assert!(parse_host("127.0.0.1:0").is_err());
        assert!(parse_host("[::1:9042").unwrap_err().contains("']'"));
    }

    #[test]
    fn replication_refuses_a_data_centre_given_twice_or_unnamed() {
        assert_eq!(
            parse_replication("dc1:3,dc2:1").unwrap(),
            BTreeMap::from([("dc1".to_string(), 3), ("dc2".to_string(), 1)])
        );
        assert_eq!(
            parse_replication("dc1:3,dc1:2").unwrap_err(),
            "'dc1:3,dc1:2': data centre 'dc1' is given twice"
        );
        assert!(
            parse_replication(":3")
                .unwrap_err()
                .contains("no data centre")
        );
        assert!(
            parse_replication("dc1:x")
                .unwrap_err()
                .contains("whole number")
        );
    }

    #[test]
    fn profile_operations_persist_as_their_names() {
        let insert = OpKind::profile_op("sw_insert", true);
        assert_eq!(serde_json::to_string(&insert).unwrap(), "\"sw_insert\"");
        let back: OpKind = serde_json::from_str("\"sw_insert\"").unwrap();
        assert_eq!(back, insert);
        assert!(back.writes(), "the name keeps what it was registered with");
        // Built-in names stay built-ins, and a ratio still takes built-ins only.
        assert_eq!(OpKind::profile_op("read", false), OpKind::Read);
        assert_eq!(
            serde_json::from_str::<OpKind>("\"range\"").unwrap(),
            OpKind::Range
        );
        assert!("sw_insert=1".parse::<Ratio>().is_err());
        let m: BTreeMap<OpKind, u32> = [(OpKind::Write, 1), (insert, 2)].into();
        let j = serde_json::to_string(&m).unwrap();
        assert_eq!(j, "{\"write\":1,\"sw_insert\":2}");
        assert_eq!(
            serde_json::from_str::<BTreeMap<OpKind, u32>>(&j).unwrap(),
            m
        );
    }

    #[test]
    fn ratio_parses_and_picks_by_weight() {
        let r: Ratio = "write=10,read=10,range=1".parse().unwrap();
        assert_eq!(r.total(), 21);
        let picks: Vec<OpKind> = (0..21).map(|x| r.pick(x)).collect();
        assert_eq!(picks.iter().filter(|k| **k == OpKind::Write).count(), 10);
        assert_eq!(picks.iter().filter(|k| **k == OpKind::Read).count(), 10);
        assert_eq!(picks.iter().filter(|k| **k == OpKind::Range).count(), 1);
        assert!("write=0".parse::<Ratio>().is_err());
        assert!("upsert=1".parse::<Ratio>().is_err());
        // keyvalue's further operations are built-in kinds that write.
        let more: Ratio = "delete=1,lwt=2,batch=3,counter=4".parse().unwrap();
        assert_eq!(more.total(), 10);
        assert!(more.0.keys().all(|k| k.writes()));
        assert_eq!(more.to_string(), "batch=3,counter=4,delete=1,lwt=2");
        assert_eq!(OpKind::named("lwt"), "lwt".parse().unwrap());
        assert!(OpKind::named("lwt").writes());
        assert!("write".parse::<Ratio>().is_err());
        assert_eq!(r.to_string(), "write=10,read=10,range=1");
    }

    #[test]
    fn replication_forms() {
        assert_eq!(
            parse_replication("3").unwrap(),
            BTreeMap::from([("dc1".into(), 3)])
        );
        assert_eq!(parse_replication("dc1:1,dc2:0").unwrap().len(), 2);
        assert!(parse_replication("dc1").is_err());
    }
}
