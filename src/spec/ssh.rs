//! A remote host reached with the system's OpenSSH client (`cqlbench probe --ssh`): where
//! (`[USER@]HOST[:PORT]`), with which key, and extra `ssh -o` options. Each value parses
//! itself and refuses malformed text in one line.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Invalid;

/// `[USER@]HOST[:PORT]`; an IPv6 address with a port is written `[ADDR]:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshDest {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl SshDest {
    /// `HOST[:PORT]`, as messages name the host.
    pub fn host_port(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        match self.port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }
}

impl fmt::Display for SshDest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        f.write_str(&self.host_port())
    }
}

/// Characters of a user or host name: no spaces, no shell or ssh syntax, not starting with
/// `-` (ssh would read it as an option).
fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl FromStr for SshDest {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        let bad = |why: &str| {
            crate::invalid!("invalid ssh destination '{s}': {why} (accepted: [USER@]HOST[:PORT])")
        };
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, s),
        };
        if let Some(u) = user
            && !plain(u)
        {
            return Err(bad(&format!(
                "user '{u}' (give 1 or more of A-Z a-z 0-9 . _ -)"
            )));
        }
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let Some((addr, after)) = inner.split_once(']') else {
                return Err(bad("no ']' after the IPv6 address"));
            };
            let valid = !addr.is_empty()
                && addr
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'));
            if !valid {
                return Err(bad(&format!("'{addr}' is not an IPv6 address")));
            }
            match after {
                "" => (addr, None),
                p => match p.strip_prefix(':') {
                    Some(p) => (addr, Some(p)),
                    None => return Err(bad("text after ']' that is not ':PORT'")),
                },
            }
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        if user.is_none() && host.is_empty() {
            return Err(bad("no host"));
        }
        if !rest.starts_with('[') && !plain(host) {
            return Err(bad(&format!(
                "host '{host}' (give a name or an address of A-Z a-z 0-9 . _ -)"
            )));
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(bad(&format!("port '{p}' (give 1 to 65535)"))),
            },
        };
        Ok(SshDest {
            user: user.map(str::to_string),
            host: host.to_string(),
            port,
        })
    }
}

/// One `ssh -o KEY=VALUE` option (`--ssh-option`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshOption {
    pub key: String,
    pub value: String,
}

/// Options cqlbench sets itself: a prompt would hang a probe nobody watches.
const FIXED_OPTIONS: [&str; 1] = ["BatchMode"];

impl FromStr for SshOption {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        let bad = |why: &str| {
            crate::invalid!(
                "invalid ssh option '{s}': {why} (accepted: KEY=VALUE, as ssh -o takes, e.g. UserKnownHostsFile=/tmp/known_hosts)"
            )
        };
        let Some((key, value)) = s.split_once('=') else {
            return Err(bad("no '='"));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(bad(&format!("key '{key}' (give letters and digits)")));
        }
        if value.is_empty() || value.contains(['\n', '\r']) {
            return Err(bad("empty value"));
        }
        if FIXED_OPTIONS.iter().any(|f| f.eq_ignore_ascii_case(key)) {
            return Err(bad(&format!(
                "{key} is always yes: a probe never waits for a password or a prompt"
            )));
        }
        Ok(SshOption {
            key: key.to_string(),
            value: value.to_string(),
        })
    }
}

impl fmt::Display for SshOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// Everything needed to open a session on the remote host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshTarget {
    pub dest: SshDest,
    /// Private key (`ssh -i`); default: ssh's own (agent, ~/.ssh, ~/.ssh/config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SshOption>,
    /// `ConnectTimeout`, seconds.
    pub connect_timeout_s: u64,
}

impl SshTarget {
    /// Default connection timeout.
    pub const CONNECT_TIMEOUT_S: u64 = 10;

    /// The arguments of `ssh` before the remote command: BatchMode (never a prompt) first, the
    /// user's options next (ssh keeps the first value of an option, so they win over the
    /// defaults after them), then the connection timeout, keep-alives (a dead link is noticed in
    /// 15 s) and host keys accepted on first use but checked ever after.
    pub fn ssh_args(&self) -> Vec<String> {
        let mut a: Vec<String> = vec!["-o".into(), "BatchMode=yes".into()];
        for o in &self.options {
            a.push("-o".into());
            a.push(o.to_string());
        }
        for o in [
            format!("ConnectTimeout={}", self.connect_timeout_s),
            "ServerAliveInterval=5".into(),
            "ServerAliveCountMax=3".into(),
            "StrictHostKeyChecking=accept-new".into(),
        ] {
            a.push("-o".into());
            a.push(o);
        }
        if let Some(i) = &self.identity {
            a.push("-i".into());
            a.push(i.display().to_string());
        }
        if let Some(p) = self.dest.port {
            a.push("-p".into());
            a.push(p.to_string());
        }
        if let Some(u) = &self.dest.user {
            a.push("-l".into());
            a.push(u.clone());
        }
        // Nothing after this is read as an option, whatever the host is called.
        a.push("--".into());
        a.push(self.dest.host.clone());
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse_and_print_back() {
        for (text, user, host, port) in [
            ("db1", None, "db1", None),
            ("root@10.0.0.5", Some("root"), "10.0.0.5", None),
            (
                "ubuntu@db-1.example.com:2222",
                Some("ubuntu"),
                "db-1.example.com",
                Some(2222),
            ),
            ("[::1]:22", None, "::1", Some(22)),
            ("me@[fe80::1]", Some("me"), "fe80::1", None),
        ] {
            let d: SshDest = text.parse().unwrap();
            assert_eq!(d.user.as_deref(), user, "{text}");
            assert_eq!(d.host, host, "{text}");
            assert_eq!(d.port, port, "{text}");
            assert_eq!(d.to_string(), text);
        }
        assert_eq!("root@h:22".parse::<SshDest>().unwrap().host_port(), "h:22");
    }

    #[test]
    fn malformed_destinations_are_refused_naming_the_part() {
        for (text, needle) in [
            ("", "no host"),
            ("root@", "host ''"),
            ("h:0", "port '0'"),
            ("h:70000", "port '70000'"),
            ("h:ssh", "port 'ssh'"),
            ("-oProxyCommand=x", "host '-oProxyCommand=x'"),
            ("a b", "host 'a b'"),
            ("us;er@h", "user 'us;er'"),
            ("[::1", "no ']'"),
            ("[xyz]:22", "'xyz' is not an IPv6 address"),
            ("[::1]22", "not ':PORT'"),
        ] {
            let err = text.parse::<SshDest>().unwrap_err().0;
            assert!(err.contains(needle), "{text:?}: {err}");
            assert!(err.contains("[USER@]HOST[:PORT]"), "{err}");
        }
    }

    #[test]
    fn options_parse_and_batch_mode_is_fixed() {
        let o: SshOption = "UserKnownHostsFile=/tmp/k h".parse().unwrap();
        assert_eq!(
            (o.key.as_str(), o.value.as_str()),
            ("UserKnownHostsFile", "/tmp/k h")
        );
        for (text, needle) in [
            ("NoEquals", "no '='"),
            ("=x", "key ''"),
            ("Bad-Key=1", "key 'Bad-Key'"),
            ("Port=", "empty value"),
            ("batchmode=no", "always yes"),
        ] {
            let err = text.parse::<SshOption>().unwrap_err().0;
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn ssh_arguments_put_batch_mode_first_and_the_users_options_before_the_defaults() {
        let t = SshTarget {
            dest: "root@db1:2222".parse().unwrap(),
            identity: Some("/k/id".into()),
            options: vec!["StrictHostKeyChecking=yes".parse().unwrap()],
            connect_timeout_s: 7,
        };
        let args = t.ssh_args().join(" ");
        assert_eq!(
            args,
            "-o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=7 \
             -o ServerAliveInterval=5 -o ServerAliveCountMax=3 \
             -o StrictHostKeyChecking=accept-new -i /k/id -p 2222 -l root -- db1"
        );
    }
}
