//! A Prometheus text-format client: an HTTP GET over `ureq` and a parser for
//! `name{labels} value` lines.

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

/// Why an endpoint gave no text.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("connection refused")]
    Refused,
    #[error("no answer within {0:.1}s")]
    TimedOut(f64),
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("{0}")]
    Other(String),
}

/// Fetches `http://host:port/metrics`.
pub fn scrape(host: &str, port: u16, timeout: Duration) -> Result<String, FetchError> {
    scrape_path(host, port, "/metrics", timeout)
}

/// Fetches `http://host:port{path}`; `timeout` bounds the whole exchange.
pub fn scrape_path(
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
) -> Result<String, FetchError> {
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .build()
        .into();
    let failed = |e: ureq::Error| match e {
        ureq::Error::StatusCode(code) => FetchError::Status(code),
        ureq::Error::Timeout(_) => FetchError::TimedOut(timeout.as_secs_f64()),
        ureq::Error::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => FetchError::Refused,
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                FetchError::TimedOut(timeout.as_secs_f64())
            }
            _ => FetchError::Other(io.to_string()),
        },
        ureq::Error::HostNotFound => FetchError::Other(format!("cannot resolve {host}")),
        other => FetchError::Other(other.to_string()),
    };
    let mut answer = agent
        .get(format!("http://{host}:{port}{path}"))
        .call()
        .map_err(failed)?;
    answer.body_mut().read_to_string().map_err(failed)
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
    fn a_fetch_names_a_refusal_a_status_and_a_silence() {
        use std::io::{Read, Write};
        let t = Duration::from_secs(2);
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        assert!(matches!(
            scrape("127.0.0.1", port, t),
            Err(FetchError::Refused)
        ));
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let answers = std::thread::spawn(move || {
            for answer in ["HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n", ""] {
                let (mut c, _) = server.accept().unwrap();
                let mut buf = [0u8; 1024];
                let _ = c.read(&mut buf);
                if answer.is_empty() {
                    // Silent until the client gives up.
                    std::thread::sleep(Duration::from_millis(800));
                } else {
                    c.write_all(answer.as_bytes()).unwrap();
                }
            }
        });
        let status = scrape("127.0.0.1", port, t).unwrap_err();
        assert_eq!(status.to_string(), "HTTP status 503");
        let silent = scrape("127.0.0.1", port, Duration::from_millis(300)).unwrap_err();
        assert_eq!(silent.to_string(), "no answer within 0.3s");
        answers.join().unwrap();
    }

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
