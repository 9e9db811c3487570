//! Items a long run keeps for its result but does not need in memory until the end: a phase's
//! interval records and the metrics' samples. They are appended to a file of their own, one
//! JSON document a line, as they come, and read back in order: the result's rewrites during the
//! run stream them from there ([`Streamed`]), and the run reads them back when it ends. The
//! client's memory then stays flat however long the run (issue 36; `examples/recorder_memory.rs`
//! measures it).
//!
//! The file is anonymous, in the result's own directory (never a tmpfs that would only move the
//! memory elsewhere): nothing is left behind when the process ends, however it ends. A spill
//! that failed to append takes no more items, so its caller keeps them in memory, after the
//! spilled ones, in order.

use std::fs::File;
use std::io::{BufReader, Read};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};

/// Items of type `T` appended to an anonymous file, in order.
pub struct Spill<T> {
    file: File,
    /// How many items, and the bytes they take: a failed append's partial line lies beyond
    /// `end`, and the next append (if any) writes over it.
    len: usize,
    end: u64,
    /// An append failed: none is taken any more.
    closed: bool,
    /// The line being written, kept between appends.
    line: Vec<u8>,
    _items: PhantomData<fn() -> T>,
}

impl<T> Spill<T> {
    /// An empty spill in `dir`.
    pub fn create_in(dir: &Path) -> std::io::Result<Spill<T>> {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        Ok(Spill {
            file: tempfile::tempfile_in(dir)?,
            len: 0,
            end: 0,
            closed: false,
            line: Vec::new(),
            _items: PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes its items take in the file.
    pub fn bytes(&self) -> u64 {
        self.end
    }
}

impl<T: Serialize> Spill<T> {
    /// Appends `item`. After an error the spill takes no more items: the caller keeps them.
    pub fn push(&mut self, item: &T) -> std::io::Result<()> {
        if self.closed {
            return Err(std::io::Error::other("an earlier append failed"));
        }
        self.line.clear();
        let written = serde_json::to_writer(&mut self.line, item)
            .map_err(std::io::Error::other)
            .and_then(|()| {
                self.line.push(b'\n');
                self.file.write_all_at(&self.line, self.end)
            });
        match written {
            Ok(()) => {
                self.end += self.line.len() as u64;
                self.len += 1;
                Ok(())
            }
            Err(e) => {
                self.closed = true;
                Err(e)
            }
        }
    }
}

impl<T: DeserializeOwned> Spill<T> {
    /// Its items, in order, read from the file.
    pub fn iter(&self) -> impl Iterator<Item = std::io::Result<T>> + '_ {
        let at = At {
            file: &self.file,
            pos: 0,
            end: self.end,
        };
        serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, at))
            .into_iter::<T>()
            .map(|r| r.map_err(std::io::Error::other))
    }

    /// All its items, read back into memory.
    pub fn read_all(&self) -> std::io::Result<Vec<T>> {
        let mut out = Vec::with_capacity(self.len);
        for item in self.iter() {
            out.push(item?);
        }
        if out.len() != self.len {
            return Err(std::io::Error::other(format!(
                "{} of {} kept items read back",
                out.len(),
                self.len
            )));
        }
        Ok(out)
    }
}

/// Reads a file from `pos` to `end` without moving its offset (the appends write at theirs).
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf.len().min((self.end - self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A sequence serialized as a spill's items followed by `tail` (the items kept in memory):
/// what a result's rewrite writes in place of an array, without reading the spill into memory.
pub struct Streamed<'a, T, U> {
    pub spill: Option<&'a Spill<T>>,
    pub tail: &'a [U],
}

impl<T: Serialize + DeserializeOwned, U: Serialize> Serialize for Streamed<'_, T, U> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let spilled = self.spill.map_or(0, Spill::len);
        let mut seq = s.serialize_seq(Some(spilled + self.tail.len()))?;
        if let Some(spill) = self.spill {
            let mut read = 0;
            for item in spill.iter() {
                seq.serialize_element(&item.map_err(S::Error::custom)?)?;
                read += 1;
            }
            if read != spilled {
                return Err(S::Error::custom(format!(
                    "{read} of {spilled} kept items read back"
                )));
            }
        }
        for item in self.tail {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct Item {
        t: f64,
        name: String,
    }

    fn item(i: usize) -> Item {
        Item {
            t: i as f64 / 3.0,
            name: format!("item {i}"),
        }
    }

    #[test]
    fn items_come_back_in_order_and_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spill::create_in(dir.path()).unwrap();
        assert!(s.is_empty());
        for i in 0..1000 {
            s.push(&item(i)).unwrap();
        }
        assert_eq!(s.len(), 1000);
        let back = s.read_all().unwrap();
        assert_eq!(back, (0..1000).map(item).collect::<Vec<_>>());
        // Read again, and appended to after a read.
        s.push(&item(1000)).unwrap();
        assert_eq!(s.iter().count(), 1001);
        assert!(s.bytes() > 1000 * 20);
        // The file is anonymous: nothing in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_streamed_sequence_is_the_spill_then_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spill::create_in(dir.path()).unwrap();
        for i in 0..3 {
            s.push(&item(i)).unwrap();
        }
        let tail = [item(3), item(4)];
        let text = serde_json::to_string(&Streamed {
            spill: Some(&s),
            tail: &tail,
        })
        .unwrap();
        let back: Vec<Item> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, (0..5).map(item).collect::<Vec<_>>());
        let none: Streamed<'_, Item, Item> = Streamed {
            spill: None,
            tail: &[],
        };
        assert_eq!(serde_json::to_string(&none).unwrap(), "[]");
    }

    #[test]
    fn a_spill_that_failed_takes_no_more_items_and_keeps_what_it_had() {
        let dir = tempfile::tempdir().unwrap();
        let mut s: Spill<Item> = Spill::create_in(dir.path()).unwrap();
        s.push(&item(0)).unwrap();
        // A file that takes no more writes: the next append fails, and so do all after it.
        s.file = File::open("/dev/null").unwrap();
        let e = s.push(&item(1)).unwrap_err();
        assert!(!e.to_string().is_empty());
        assert!(s.push(&item(2)).is_err());
        assert_eq!(s.len(), 1);
    }
}
