//! A minimal Prometheus text-format client: one HTTP/1.0 GET over a TCP socket and a parser
//! for `name{labels} value` lines. No HTTP library needed for a loopback scrape.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// `key="value"` pairs in order of appearance.
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Fetches `http://host:port/metrics`.
pub fn scrape(host: &str, port: u16, timeout: Duration) -> std::io::Result<String> {
    scrape_path(host, port, "/metrics", timeout)
}

/// Fetches `http://host:port{path}`; `timeout` bounds the connect and each read and write.
pub fn scrape_path(
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
) -> std::io::Result<String> {
    let addr = (host, port).to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("cannot resolve {host}"),
        )
    })?;
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    // One write: `write!` would send each piece of the request as a segment of its own.
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\n\r\n").as_bytes())?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "malformed HTTP response")
    })?;
    if !head.starts_with("HTTP/1.") || head.split_whitespace().nth(1).is_none_or(|c| c != "200") {
        let status = head.lines().next().unwrap_or("").to_string();
        return Err(std::io::Error::other(format!("HTTP status: {status}")));
    }
    Ok(body.to_string())
}

/// Parses the text exposition format; comments and malformed lines are skipped.
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter_map(parse_line).collect()
}

/// Parses only the lines whose metric name is one of `names` (a scrape has ~1,000 lines; the
/// sampler needs a dozen).
pub fn parse_named(text: &str, names: &[&str]) -> Vec<Sample> {
    text.lines()
        .filter(|l| {
            names.iter().any(|n| {
                l.strip_prefix(n)
                    .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
            })
        })
        .filter_map(parse_line)
        .collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (name, labels, rest) = match line.find('{') {
        Some(i) => {
            let close = line.rfind('}')?;
            (
                &line[..i],
                parse_labels(&line[i + 1..close]),
                &line[close + 1..],
            )
        }
        None => {
            let (n, r) = line.split_once(char::is_whitespace)?;
            (n, Vec::new(), r)
        }
    };
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "NaN" => f64::NAN,
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

fn parse_labels(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 1..];
        let Some(after) = after.strip_prefix('"') else {
            break;
        };
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(if n == 'n' { '\n' } else { n });
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.push((key, value));
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exposition_lines() {
        let text = "# HELP x\n# TYPE x gauge\n\
java_lang_memory_heapmemoryusage_used 1.64898816E8\n\
jvm_buffer_pool_used_bytes{pool=\"mapped - 'non-volatile memory'\",x=\"a\\\"b\"} 0.0\n\
org_apache_cassandra_metrics_compaction_pendingtasks NaN\n\
garbage\n";
        let s = parse(text);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].name, "java_lang_memory_heapmemoryusage_used");
        assert_eq!(s[0].value, 164898816.0);
        assert_eq!(s[1].label("pool"), Some("mapped - 'non-volatile memory'"));
        assert_eq!(s[1].label("x"), Some("a\"b"));
        assert!(s[2].value.is_nan());
        let named = parse_named(
            text,
            &[
                "org_apache_cassandra_metrics_compaction_pendingtasks",
                "jvm_buffer_pool_used",
            ],
        );
        assert_eq!(named.len(), 1, "whole names only: {named:?}");
        assert_eq!(named[0].name, s[2].name);
    }
}
