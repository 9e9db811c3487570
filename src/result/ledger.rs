//! The acknowledged-write ledger: which write cycles the cluster acknowledged and which failed
//! or timed out (their outcome is unknown: they may or may not have been applied), as
//! compressed bitmaps of cycle numbers per phase, operation kind and outcome.
//!
//! Cycles of a phase are claimed in order, so the bitmaps are long runs and stay small (a
//! run-length container holds a run of any length in 4 bytes). Each worker records into the
//! interval snapshot it already owns; the run appends every merged interval's bitmaps to the
//! ledger file as one frame, so what the client saw acknowledged survives a crash of the
//! client up to its last completed interval (the file is flushed after every frame; it is not
//! fsynced, so a crash of the machine may lose its page cache).
//!
//! File layout: the 8-byte magic `CQLBLDG1`, then frames of `tag length (u8), tag (UTF-8),
//! payload length (u32 LE), payload` where the payload is a portable roaring treemap and the
//! tag is `PHASE:MAPPING:OP:OUTCOME` (see [`Tag`]). A frame cut short by a crash is ignored and
//! reported as such.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;

use roaring::RoaringTreemap;

use crate::spec::OpKind;
use crate::stats::writes::{Outcome, Writes};

const MAGIC: &[u8; 8] = b"CQLBLDG1";
/// Since the ledger names the run that wrote it: the magic, then the run's ledger id (a u16
/// length, little-endian, and its UTF-8), then the frames.
const MAGIC_2: &[u8; 8] = b"CQLBLDG2";

/// A ledger id for a run starting now: the time in nanoseconds and this process, unique
/// among the runs of a machine (and the shards of one run).
pub fn new_id(env: &str) -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{env}-{ns}-{}", std::process::id())
}

/// How a phase maps cycles to rows: rampup and fills write row `cycle mod rows` in order,
/// the main phase's mix draws the row by hashing the cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mapping {
    Sequential,
    Hashed,
}

impl Mapping {
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Sequential => "seq",
            Mapping::Hashed => "hash",
        }
    }
}

/// What one bitmap of the file holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag {
    pub phase: String,
    pub mapping: Mapping,
    pub op: OpKind,
    pub outcome: Outcome,
}

impl Tag {
    fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.phase,
            self.mapping.name(),
            self.op,
            self.outcome.name()
        )
    }

    fn decode(s: &str) -> Option<Tag> {
        let mut it = s.split(':');
        let (phase, mapping, op, outcome) = (it.next()?, it.next()?, it.next()?, it.next()?);
        if it.next().is_some() || phase.is_empty() {
            return None;
        }
        Some(Tag {
            phase: phase.to_string(),
            mapping: match mapping {
                "seq" => Mapping::Sequential,
                "hash" => Mapping::Hashed,
                _ => return None,
            },
            op: OpKind::named(op),
            outcome: match outcome {
                "acked" => Outcome::Acked,
                "unknown" => Outcome::Unknown,
                _ => return None,
            },
        })
    }
}

/// Appends frames to a ledger file.
pub struct LedgerWriter {
    file: io::BufWriter<std::fs::File>,
}

impl LedgerWriter {
    /// Creates (truncates) the file and writes its magic and the id of the run writing it
    /// (the run's result carries the same id, so a ledger another run left is never read for
    /// it).
    pub fn create(path: &Path, id: &str) -> io::Result<LedgerWriter> {
        let id_len = u16::try_from(id.len()).map_err(|_| io::Error::other("ledger id too long"))?;
        let mut file = io::BufWriter::new(std::fs::File::create(path)?);
        file.write_all(MAGIC_2)?;
        file.write_all(&id_len.to_le_bytes())?;
        file.write_all(id.as_bytes())?;
        file.flush()?;
        Ok(LedgerWriter { file })
    }

    /// Appends one frame per non-empty bitmap of `w`, then flushes.
    pub fn append(&mut self, phase: &str, mapping: Mapping, w: &Writes) -> io::Result<()> {
        for ((op, outcome), bitmap) in &w.by {
            if bitmap.is_empty() {
                continue;
            }
            let mut b = bitmap.clone();
            b.optimize();
            let tag = Tag {
                phase: phase.to_string(),
                mapping,
                op: *op,
                outcome: *outcome,
            }
            .encode();
            let mut payload = Vec::with_capacity(b.serialized_size());
            b.serialize_into(&mut payload)?;
            let len = u32::try_from(payload.len())
                .map_err(|_| io::Error::other("ledger frame over 4 GiB"))?;
            self.file.write_all(&[tag.len() as u8])?;
            self.file.write_all(tag.as_bytes())?;
            self.file.write_all(&len.to_le_bytes())?;
            self.file.write_all(&payload)?;
        }
        self.file.flush()
    }
}

/// A ledger as read back: the union of its frames per tag.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    /// The id of the run that wrote it (none in a ledger written before ledgers had one).
    pub id: Option<String>,
    pub bitmaps: BTreeMap<Tag, RoaringTreemap>,
    /// Frames read.
    pub frames: u64,
    /// The last frame was cut short (the client died while writing it) and was left out.
    pub truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: not a cqlbench write ledger")]
    NotALedger { path: String },
    #[error("{path}: frame {frame}: {what}")]
    Corrupt {
        path: String,
        frame: u64,
        what: String,
    },
}

impl Ledger {
    pub fn read(path: &Path) -> Result<Ledger, LedgerError> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| LedgerError::Io {
            path: p.clone(),
            source,
        })?;
        Self::parse(&bytes).map_err(|e| match e {
            ParseError::NotALedger => LedgerError::NotALedger { path: p },
            ParseError::Corrupt { frame, what } => LedgerError::Corrupt {
                path: p,
                frame,
                what,
            },
        })
    }

    fn parse(bytes: &[u8]) -> Result<Ledger, ParseError> {
        let mut ledger = Ledger::default();
        let rest = match (bytes.strip_prefix(MAGIC_2), bytes.strip_prefix(MAGIC)) {
            (Some(after), _) => {
                let corrupt = || ParseError::Corrupt {
                    frame: 0,
                    what: "the run's id is cut short".into(),
                };
                let (len, after) = after.split_at_checked(2).ok_or_else(corrupt)?;
                let len = u16::from_le_bytes([len[0], len[1]]) as usize;
                let (id, after) = after.split_at_checked(len).ok_or_else(corrupt)?;
                ledger.id = Some(String::from_utf8_lossy(id).into_owned());
                after
            }
            (None, Some(after)) => after,
            (None, None) => return Err(ParseError::NotALedger),
        };
        let mut r = rest;
        while !r.is_empty() {
            let frame = ledger.frames + 1;
            let Some((&tag_len, after)) = r.split_first() else {
                break;
            };
            let tag_len = tag_len as usize;
            if after.len() < tag_len + 4 {
                ledger.truncated = true;
                break;
            }
            let (tag, after) = after.split_at(tag_len);
            let (len, after) = after.split_at(4);
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            if after.len() < len {
                ledger.truncated = true;
                break;
            }
            let (payload, after) = after.split_at(len);
            let tag = std::str::from_utf8(tag)
                .ok()
                .and_then(Tag::decode)
                .ok_or_else(|| ParseError::Corrupt {
                    frame,
                    what: format!("unreadable tag {:?}", String::from_utf8_lossy(tag)),
                })?;
            let mut reader = payload;
            let bitmap =
                RoaringTreemap::deserialize_from(&mut reader).map_err(|e| ParseError::Corrupt {
                    frame,
                    what: format!("bitmap: {e}"),
                })?;
            if reader.read(&mut [0u8])? != 0 {
                return Err(ParseError::Corrupt {
                    frame,
                    what: "bytes after the bitmap".into(),
                });
            }
            *ledger.bitmaps.entry(tag).or_default() |= bitmap;
            ledger.frames = frame;
            r = after;
        }
        Ok(ledger)
    }

    /// Cycles of `outcome` over every phase and kind, with their tags.
    pub fn of(&self, outcome: Outcome) -> impl Iterator<Item = (&Tag, &RoaringTreemap)> {
        self.bitmaps
            .iter()
            .filter(move |(t, _)| t.outcome == outcome)
    }

    /// How many write cycles ended with `outcome`.
    pub fn count(&self, outcome: Outcome) -> u64 {
        self.of(outcome).map(|(_, b)| b.len()).sum()
    }
}

enum ParseError {
    NotALedger,
    Corrupt { frame: u64, what: String },
}

impl From<io::Error> for ParseError {
    fn from(e: io::Error) -> Self {
        ParseError::Corrupt {
            frame: 0,
            what: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(acked: std::ops::Range<u64>, unknown: &[u64]) -> Writes {
        let mut w = Writes::default();
        for c in acked {
            w.record(OpKind::Write, c, Outcome::Acked);
        }
        for &c in unknown {
            w.record(OpKind::Write, c, Outcome::Unknown);
        }
        w
    }

    #[test]
    fn frames_are_unioned_per_tag_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ledger");
        let mut l = LedgerWriter::create(&path, "t").unwrap();
        l.append("rampup", Mapping::Sequential, &writes(0..1000, &[]))
            .unwrap();
        l.append("main", Mapping::Hashed, &writes(0..500, &[501, 777]))
            .unwrap();
        l.append("main", Mapping::Hashed, &writes(1000..2000, &[2500]))
            .unwrap();
        let r = Ledger::read(&path).unwrap();
        assert!(!r.truncated);
        assert_eq!(r.frames, 5);
        assert_eq!(r.count(Outcome::Acked), 2500);
        assert_eq!(r.count(Outcome::Unknown), 3);
        let main_acked = Tag {
            phase: "main".into(),
            mapping: Mapping::Hashed,
            op: OpKind::Write,
            outcome: Outcome::Acked,
        };
        let b = &r.bitmaps[&main_acked];
        assert_eq!(b.len(), 1500);
        assert!(b.contains(1999) && !b.contains(500) && !b.contains(2000));
    }

    #[test]
    fn long_runs_stay_small() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ledger");
        let mut l = LedgerWriter::create(&path, "t").unwrap();
        // A million acknowledged writes with a few hundred failures among them.
        let fails: Vec<u64> = (0..300).map(|i| i * 3331).collect();
        let mut w = writes(0..1_000_000, &fails);
        for f in &fails {
            w.by.get_mut(&(OpKind::Write, Outcome::Acked))
                .unwrap()
                .remove(*f);
        }
        l.append("main", Mapping::Hashed, &w).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 8_000, "{size} bytes for a million cycles");
        let r = Ledger::read(&path).unwrap();
        assert_eq!(r.count(Outcome::Acked), 1_000_000 - 300);
    }

    #[test]
    fn a_frame_cut_short_is_left_out_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ledger");
        let mut l = LedgerWriter::create(&path, "t").unwrap();
        l.append("main", Mapping::Hashed, &writes(0..100, &[]))
            .unwrap();
        l.append("main", Mapping::Hashed, &writes(100..200, &[]))
            .unwrap();
        drop(l);
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 3]).unwrap();
        let r = Ledger::read(&path).unwrap();
        assert!(r.truncated);
        assert_eq!(r.count(Outcome::Acked), 100);
    }

    #[test]
    fn other_files_and_damaged_frames_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ledger");
        std::fs::write(&path, b"{\"json\": 1}").unwrap();
        let e = Ledger::read(&path).unwrap_err().to_string();
        assert!(e.contains("not a cqlbench write ledger"), "{e}");
        let mut bad = MAGIC.to_vec();
        bad.push(3);
        bad.extend_from_slice(b"a:b");
        bad.extend_from_slice(&0u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = Ledger::read(&path).unwrap_err().to_string();
        assert!(e.contains("frame 1: unreadable tag"), "{e}");
    }
}
