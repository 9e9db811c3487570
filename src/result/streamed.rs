//! A run result written while parts of it are spilled ([`crate::spill`]): each phase's kept
//! interval records and the metrics' samples are streamed from their spills into the file, in
//! front of those still in memory, so a rewrite during a long run never holds them all.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::IntervalRecord;
use super::series::Sample;
use crate::spill::{Spill, Streamed};

/// A run's spilled parts.
#[derive(Clone, Copy, Default)]
pub struct Spilled<'a> {
    /// By phase index: the records a phase spilled, which come before its `intervals`.
    pub intervals: &'a [Option<Spill<IntervalRecord>>],
    /// The samples spilled, which come before the series' `samples`.
    pub samples: Option<&'a Spill<Sample>>,
}

/// The result's document (without its spilled parts) and the spills that fill them in.
pub(super) struct Doc<'a> {
    pub value: &'a Value,
    pub spilled: Spilled<'a>,
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(obj) = self.value.as_object() else {
            return self.value.serialize(s);
        };
        let mut map = s.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            match (k.as_str(), v) {
                ("phases", Value::Array(phases)) => map.serialize_entry(
                    k,
                    &Phases {
                        phases,
                        spills: self.spilled.intervals,
                    },
                )?,
                ("metrics", _) => map.serialize_entry(
                    k,
                    &WithArray {
                        value: v,
                        key: "samples",
                        spill: self.spilled.samples,
                    },
                )?,
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

struct Phases<'a> {
    phases: &'a [Value],
    spills: &'a [Option<Spill<IntervalRecord>>],
}

impl Serialize for Phases<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.phases.iter().enumerate().map(|(i, p)| WithArray {
            value: p,
            key: "intervals",
            spill: self.spills.get(i).and_then(Option::as_ref),
        }))
    }
}

/// An object whose array `key` is a spill's items followed by the array's own.
struct WithArray<'a, T> {
    value: &'a Value,
    key: &'static str,
    spill: Option<&'a Spill<T>>,
}

impl<T: Serialize + serde::de::DeserializeOwned> Serialize for WithArray<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(obj) = self.value.as_object() else {
            return self.value.serialize(s);
        };
        let mut map = s.serialize_map(Some(obj.len()))?;
        for (k, v) in obj {
            if k == self.key {
                let tail = v.as_array().map_or(&[][..], Vec::as_slice);
                map.serialize_entry(
                    k,
                    &Streamed {
                        spill: self.spill,
                        tail,
                    },
                )?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RunResult;
    use crate::result::fixture::{RunShape, metrics, run};

    #[test]
    fn a_result_written_with_its_spills_reads_back_whole_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let shape = RunShape {
            intervals: 30,
            warmup: 5,
            ..Default::default()
        };
        let mut whole = run("spilled", &shape);
        whole.metrics = Some(Box::new(metrics(2, &["loop0"], 30.0, 1)));
        // Each phase's first 20 records and the first 10 samples spilled, the rest in memory.
        let mut r = whole.clone();
        let mut spills = Vec::new();
        for p in &mut r.phases {
            let mut s = Spill::create_in(dir.path()).unwrap();
            for i in p.intervals.drain(..20.min(p.intervals.len())) {
                s.push(&i).unwrap();
            }
            spills.push(Some(s));
        }
        let mut samples = Spill::create_in(dir.path()).unwrap();
        let m = r.metrics.as_mut().unwrap();
        assert!(m.samples.len() > 10);
        for x in m.samples.drain(..10) {
            samples.push(&x).unwrap();
        }
        let out = dir.path().join("r.json");
        r.write_with(
            &out,
            Spilled {
                intervals: &spills,
                samples: Some(&samples),
            },
        )
        .unwrap();
        assert_eq!(RunResult::read(&out).unwrap(), whole);
        // Nothing spilled: the same file as a plain write.
        let plain = dir.path().join("plain.json");
        whole.write(&plain).unwrap();
        whole.write_with(&out, Spilled::default()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            std::fs::read_to_string(&plain).unwrap()
        );
    }
}
