//! HdrHistogram interval logs (the `.hlog` format HistogramLogProcessor and other HDR tools
//! read): one line per interval and tag, with the V2-deflate histogram in base64.

use std::io::Write;
use std::path::Path;

use hdrhistogram::Histogram;

/// An open interval log.
pub struct IntervalLog {
    file: std::io::BufWriter<std::fs::File>,
}

impl IntervalLog {
    /// Creates the file and writes the header; `start_unix_s` is the base time.
    pub fn create(path: &Path, start_unix_s: f64) -> std::io::Result<IntervalLog> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(
            file,
            "#[Histogram log written by cqlbench {}; values in nanoseconds]",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(
            file,
            "#[StartTime: {start_unix_s:.3} (seconds since epoch)]"
        )?;
        writeln!(file, "#[BaseTime: {start_unix_s:.3} (seconds since epoch)]")?;
        writeln!(
            file,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        file.flush()?;
        Ok(IntervalLog { file })
    }

    /// Appends one histogram: `tag` like `main/write/response`, times in seconds from the
    /// base time, max in milliseconds.
    pub fn append(
        &mut self,
        tag: &str,
        start_s: f64,
        length_s: f64,
        h: &Histogram<u64>,
    ) -> std::io::Result<()> {
        if h.is_empty() {
            return Ok(());
        }
        writeln!(
            self.file,
            "Tag={tag},{start_s:.3},{length_s:.3},{:.3},{}",
            h.max() as f64 / 1e6,
            crate::stats::encode(h)
        )
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// A log every write of which fails, as on a full disk (for the tests of its writers).
    #[cfg(test)]
    pub fn full() -> IntervalLog {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        IntervalLog {
            file: std::io::BufWriter::new(file),
        }
    }
}

/// One histogram line of an interval log: tag, start (s), length (s), histogram.
pub type LogEntry = (String, f64, f64, Histogram<u64>);

/// Reads the histogram lines back with hdrhistogram's own interval-log reader (shards merge
/// their loaders' logs through it); a line it cannot read is refused with its byte offset.
pub fn read(path: &Path) -> Result<Vec<LogEntry>, crate::error::Invalid> {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry as Line};
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for line in IntervalLogIterator::new(&bytes) {
        let line = line.map_err(|e| crate::invalid!("not an interval log line: {e:?}"))?;
        if let Line::Interval(i) = line {
            let tag = i.tag().map(|t| t.as_str().to_string()).unwrap_or_default();
            out.push((
                tag,
                i.start_timestamp().as_secs_f64(),
                i.duration().as_secs_f64(),
                crate::stats::decode(i.encoded_histogram())?,
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_lines_hdr_tools_can_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.hlog");
        let mut log = IntervalLog::create(&p, 1_700_000_000.0).unwrap();
        let mut h = crate::stats::new_histogram();
        crate::stats::record(&mut h, 2_500_000);
        log.append("main/write/response", 1.0, 1.0, &h).unwrap();
        log.append(
            "main/read/response",
            1.0,
            1.0,
            &crate::stats::new_histogram(),
        )
        .unwrap();
        log.flush().unwrap();
        let back = read(&p).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, "main/write/response");
        assert_eq!(back[0].3.len(), 1);
        assert_eq!((back[0].1, back[0].2), (1.0, 1.0));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("#[StartTime: 1700000000.000"));
        std::fs::write(&p, text + "Tag=x,1.0,one,2.0,AAAA\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("not an interval log line"), "{e}");
    }
}
