//! The two calls of a Prometheus server's HTTP API this crate makes, an instant query and a
//! range query (`GET /api/v1/query` and `/api/v1/query_range`), over `ureq`: plain HTTP, or
//! HTTPS through rustls with the platform's certificate roots and the driver's cryptography
//! (aws-lc-rs, see `crate::tls`). Answers are the API's JSON envelope (`status`, then
//! `data.resultType` and `data.result`, or `errorType` and `error`), decoded by serde; sample
//! values come as strings, `NaN` and `+Inf` included.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use serde::Deserialize;

/// A series' labels, `__name__` included.
pub type Labels = BTreeMap<String, String>;

/// A series' points: Unix seconds and value.
pub type Points = Vec<(f64, f64)>;

/// A server's API, by its base URL.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    /// The `Authorization` header sent with each request, if any.
    authorization: Option<String>,
}

/// The answer's envelope.
#[derive(Deserialize)]
struct Answer {
    status: String,
    data: Option<Data>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
}

/// The two result types these queries give (a scalar or a string would not decode).
#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum Data {
    Matrix(Vec<RangeSeries>),
    Vector(Vec<InstantSample>),
}

#[derive(Deserialize)]
struct RangeSeries {
    metric: Labels,
    /// Absent for a series of native histograms only.
    #[serde(default)]
    values: Vec<(f64, String)>,
}

#[derive(Deserialize)]
struct InstantSample {
    metric: Labels,
    /// Unix seconds and value.
    #[serde(default)]
    value: Option<(f64, String)>,
}

impl Client {
    /// A client of the server at `base` (`http[s]://host:port[/prefix]`, checked by
    /// `Server::parse`); each request may take `timeout`, its answer read whole; `ca`: the
    /// certificates an https server's chain must end in (else the platform's roots);
    /// `authorization`: the header sent with each request.
    pub fn new(
        base: &str,
        timeout: Duration,
        ca: Option<&[u8]>,
        authorization: Option<String>,
    ) -> Client {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            // An error's status comes with a body saying why: read it.
            .http_status_as_error(false);
        #[cfg(feature = "tls")]
        let config = config.tls_config(tls_config(ca));
        #[cfg(not(feature = "tls"))]
        let _ = ca;
        let agent = config.build().into();
        Client {
            agent,
            base: base.trim_end_matches('/').to_string(),
            authorization,
        }
    }

    /// The labels of each series of an instant vector `query` evaluated at `at` (Unix s).
    pub fn query(&self, query: &str, at: i64) -> Result<Vec<Labels>, ApiError> {
        let at = at.to_string();
        let Data::Vector(v) = self.call("query", &[("query", query), ("time", &at)])? else {
            return Err(ApiError::Shape("an instant vector"));
        };
        Ok(v.into_iter().map(|s| s.metric).collect())
    }

    /// Each series of an instant vector `query` evaluated at `at` (Unix s): its labels and
    /// value (a series without one is left out).
    pub fn query_values(&self, query: &str, at: i64) -> Result<Vec<(Labels, f64)>, ApiError> {
        let at = at.to_string();
        let Data::Vector(v) = self.call("query", &[("query", query), ("time", &at)])? else {
            return Err(ApiError::Shape("an instant vector"));
        };
        let mut out = Vec::new();
        for s in v {
            if let Some((_, text)) = s.value {
                out.push((s.metric, value(&text)?));
            }
        }
        Ok(out)
    }

    /// Each series of a range `query` over `[start, end]` (Unix s) at `step` seconds: its
    /// labels and its points (Unix s, value).
    pub fn query_range(
        &self,
        query: &str,
        (start, end): (i64, i64),
        step: f64,
    ) -> Result<Vec<(Labels, Points)>, ApiError> {
        let (start, end, step) = (start.to_string(), end.to_string(), step.to_string());
        let params = [
            ("query", query),
            ("start", &start),
            ("end", &end),
            ("step", &step),
        ];
        let Data::Matrix(m) = self.call("query_range", &params)? else {
            return Err(ApiError::Shape("a matrix"));
        };
        m.into_iter()
            .map(|s| {
                let points = s
                    .values
                    .into_iter()
                    .map(|(t, v)| Ok((t, value(&v)?)))
                    .collect::<Result<Points, ApiError>>()?;
                Ok((s.metric, points))
            })
            .collect()
    }

    /// One GET of `/api/v1/{endpoint}`: its data, or why there is none in one line (the
    /// server's own error, the HTTP status with the body's first line, or the transport's).
    fn call(&self, endpoint: &str, params: &[(&str, &str)]) -> Result<Data, ApiError> {
        let url = format!("{}/api/v1/{endpoint}", self.base);
        let mut request = self.agent.get(&url).query_pairs(params.iter().copied());
        if let Some(a) = &self.authorization {
            request = request.header("Authorization", a);
        }
        let mut response = request
            .call()
            .map_err(|e| ApiError::Transport(transport(&e)))?;
        let status = response.status();
        let mut body = Vec::new();
        response
            .body_mut()
            .as_reader()
            .read_to_end(&mut body)
            .map_err(ApiError::Read)?;
        let answer: Option<Answer> = serde_json::from_slice(&body).ok();
        match answer {
            Some(Answer {
                status: s,
                error_type,
                error,
                ..
            }) if s == "error" => Err(ApiError::Server {
                kind: error_type.unwrap_or_else(|| "unknown".into()),
                message: error.unwrap_or_else(|| "no message".into()),
            }),
            Some(Answer {
                data: Some(data), ..
            }) if status.is_success() => Ok(data),
            _ if status == 401 || status == 403 => Err(ApiError::Refused {
                status: status.to_string(),
                given: self.authorization.is_some(),
            }),
            _ if !status.is_success() => {
                let text = String::from_utf8_lossy(&body);
                let first = text.lines().next().unwrap_or("").trim();
                Err(ApiError::Http {
                    status: status.to_string(),
                    first: first.chars().take(200).collect(),
                })
            }
            _ => Err(ApiError::NotJson(
                serde_json::from_slice::<Answer>(&body)
                    .err()
                    .map_or_else(|| "no data".to_string(), |e| e.to_string()),
            )),
        }
    }
}

/// Why a query has no answer, in one line: the server's own error, the HTTP status with the
/// body's first line, the transport's error, or an answer not of the API's shape.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Transport(String),
    #[error("reading the answer: {0}")]
    Read(#[source] std::io::Error),
    #[error("answered an error: {kind}: {message}")]
    Server { kind: String, message: String },
    #[error("HTTP {status}: the server refused the credentials{} (--prometheus-credentials, --prometheus-token)", if *given { "" } else { " (none given)" })]
    Refused { status: String, given: bool },
    #[error("HTTP {status}{}", if first.is_empty() { String::new() } else { format!(": {first}") })]
    Http { status: String, first: String },
    #[error("the answer is not the API's JSON: {0}")]
    NotJson(String),
    #[error("the answer is not {0}")]
    Shape(&'static str),
    #[error("a sample value is not a number: '{0}'")]
    Value(String),
}

/// A sample's value as the API writes it: a decimal, `NaN`, `+Inf` or `-Inf`.
fn value(v: &str) -> Result<f64, ApiError> {
    v.parse().map_err(|_| ApiError::Value(v.to_string()))
}

/// A failed request in one line, down its chain of causes.
fn transport(e: &ureq::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// HTTPS through rustls, trusting `ca`'s certificates (else the platform's roots).
#[cfg(feature = "tls")]
fn tls_config(ca: Option<&[u8]>) -> ureq::tls::TlsConfig {
    let roots = match ca {
        Some(pem) => ureq::tls::RootCerts::Specific(std::sync::Arc::new(
            certificates(pem).unwrap_or_default(),
        )),
        None => ureq::tls::RootCerts::PlatformVerifier,
    };
    ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(roots)
        .unversioned_rustls_crypto_provider(std::sync::Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .build()
}

/// The certificates of a PEM text (its other items, keys included, left out).
#[cfg(feature = "tls")]
pub fn certificates(pem: &[u8]) -> Result<Vec<ureq::tls::Certificate<'static>>, ureq::Error> {
    let mut out = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        if let ureq::tls::PemItem::Certificate(c) = item? {
            out.push(c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_decimals_nan_and_infinities() {
        assert_eq!(value("1.5").unwrap(), 1.5);
        assert_eq!(value("+Inf").unwrap(), f64::INFINITY);
        assert_eq!(value("-Inf").unwrap(), f64::NEG_INFINITY);
        assert!(value("NaN").unwrap().is_nan());
        assert!(value("x").unwrap_err().to_string().contains("'x'"));
    }

    #[test]
    fn answers_decode_by_result_type() {
        let m: Answer = serde_json::from_str(
            r#"{"status":"success","data":{"resultType":"matrix","result":[
                {"metric":{"__name__":"up","instance":"h:9100"},"values":[[1000,"1"],[1001.5,"NaN"]]},
                {"metric":{"job":"x"},"histograms":[[1000,{"count":"1"}]]}]}}"#,
        )
        .unwrap();
        let Some(Data::Matrix(series)) = m.data else {
            panic!("not a matrix")
        };
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].metric["instance"], "h:9100");
        assert_eq!(series[0].values[1], (1001.5, "NaN".to_string()));
        assert!(series[1].values.is_empty());
        let v: Answer = serde_json::from_str(
            r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"node"},"value":[1000,"3"]}]}}"#,
        )
        .unwrap();
        assert!(matches!(v.data, Some(Data::Vector(ref s)) if s[0].metric["job"] == "node"));
    }
}
