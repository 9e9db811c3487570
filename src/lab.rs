//! A network lab built and torn down with `ip`, `iptables` and `tc` (see [`crate::spec::lab`]
//! for its names and addresses): a gateway namespace with one bridge per data centre, one for
//! the loaders inside and one outside; each node and loader in a namespace of its own on a
//! veth pair to its bridge. The gateway routes between the inside subnets, and from the
//! outside forwards only connections it NATs to a node's CQL port.
//!
//! Nothing touches the host's own namespace: every command names the lab namespace it acts
//! in, so the lab can be built from anywhere (even from inside another namespace), and
//! deleting its namespaces removes every link, address and rule it made.

use std::process::Command;

use crate::spec::lab::{self, LabSpec};

/// CQL's port, the one the gateway forwards.
const CQL_PORT: u16 = 9042;

/// Why a lab step failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("network lab '{lab}': `{command}` failed: {detail}")]
    Step {
        lab: String,
        command: String,
        detail: String,
    },
    #[error(
        "network lab '{lab}': {tool} not found (install {package}); a lab needs ip, iptables and tc, and root"
    )]
    Missing {
        lab: String,
        tool: String,
        package: String,
    },
    #[error(
        "network lab '{lab}': network namespace {namespace} exists already (a lab of that name in another clusters directory, or left by a crash): `cluster destroy` it there, or `ip netns del` its namespaces (`ip netns list | grep cqb-{lab}`)"
    )]
    Exists { lab: String, namespace: String },
    #[error("network lab '{lab}': it has no {what}")]
    NoSuch { lab: String, what: String },
}

/// A node as the lab places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabNode {
    /// 1-based, across data centres.
    pub index: usize,
    /// 0-based data centre.
    pub dc_index: usize,
}

/// A lab: its name (the cluster's), shape and nodes.
#[derive(Debug, Clone)]
pub struct Lab {
    pub name: String,
    pub spec: LabSpec,
    pub nodes: Vec<LabNode>,
}

impl Lab {
    pub fn new(name: &str, spec: LabSpec, nodes: Vec<LabNode>) -> Lab {
        Lab {
            name: name.into(),
            spec,
            nodes,
        }
    }

    /// Every namespace of the lab, the gateway first.
    pub fn namespaces(&self) -> Vec<String> {
        let mut out = vec![lab::gateway_ns(&self.name)];
        out.extend(self.nodes.iter().map(|n| lab::node_ns(&self.name, n.index)));
        out.extend((1..=self.spec.clients).map(|k| lab::client_ns(&self.name, k)));
        out.extend((1..=self.spec.outside).map(|k| lab::outside_ns(&self.name, k)));
        out
    }

    /// The data centres' indices, each once.
    fn dcs(&self) -> Vec<usize> {
        let mut d: Vec<usize> = self.nodes.iter().map(|n| n.dc_index).collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// Builds the lab; a failed step takes down what was built. A namespace of the lab that
    /// exists already (a lab of the same name from another clusters directory, or one left by
    /// a crash) is refused, naming the command that deletes it: namespaces are the machine's.
    pub fn create(&self) -> Result<(), LabError> {
        self.tools()?;
        if let Some(ns) = self.present().first() {
            return Err(LabError::Exists {
                lab: self.name.clone(),
                namespace: ns.clone(),
            });
        }
        let built = self.build();
        if built.is_err() {
            let _ = self.destroy();
        }
        built
    }

    fn build(&self) -> Result<(), LabError> {
        let gw = lab::gateway_ns(&self.name);
        self.ip(&["netns", "add", &gw])?;
        self.ip_in(&gw, &["link", "set", "lo", "up"])?;
        self.sysctl(&gw, "net.ipv4.ip_forward=1")?;
        for d in self.dcs() {
            self.bridge(&gw, &format!("dc{d}"), &lab::dc_gateway(d))?;
        }
        self.bridge(&gw, "cl", &lab::client_gateway())?;
        self.bridge(&gw, "ext", &lab::outside_gateway())?;
        for n in &self.nodes {
            self.member(
                &lab::node_ns(&self.name, n.index),
                &format!("n{}", n.index),
                &format!("dc{}", n.dc_index),
                &lab::node_address(n.dc_index, n.index),
                &lab::dc_gateway(n.dc_index),
            )?;
            if let Some(mbit) = self.spec.link_mbit {
                self.limit(&gw, &format!("n{}", n.index), mbit)?;
                self.limit(&lab::node_ns(&self.name, n.index), "eth0", mbit)?;
            }
        }
        for k in 1..=self.spec.clients {
            self.member(
                &lab::client_ns(&self.name, k),
                &format!("c{k}"),
                "cl",
                &lab::client_address(k),
                &lab::client_gateway(),
            )?;
        }
        for k in 1..=self.spec.outside {
            self.member(
                &lab::outside_ns(&self.name, k),
                &format!("x{k}"),
                "ext",
                &lab::outside_address(k),
                &lab::outside_gateway(),
            )?;
        }
        self.nat(&gw)
    }

    /// The outside reaches node i's CQL port at its NAT'd address, node 1's at the gateway's
    /// own address, and nothing else inside.
    fn nat(&self, gw: &str) -> Result<(), LabError> {
        let port = CQL_PORT.to_string();
        let mut rules: Vec<Vec<String>> = Vec::new();
        let dnat = |dest: String, to: String| -> Vec<String> {
            [
                "-t",
                "nat",
                "-A",
                "PREROUTING",
                "-i",
                "ext",
                "-d",
                &dest,
                "-p",
                "tcp",
                "--dport",
                &port,
                "-j",
                "DNAT",
                "--to-destination",
                &format!("{to}:{port}"),
            ]
            .map(String::from)
            .to_vec()
        };
        for n in &self.nodes {
            rules.push(dnat(
                lab::nat_address(n.index),
                lab::node_address(n.dc_index, n.index),
            ));
        }
        if let Some(first) = self.nodes.first() {
            rules.push(dnat(
                lab::outside_gateway(),
                lab::node_address(first.dc_index, first.index),
            ));
        }
        for r in [
            "-A FORWARD -i ext -m conntrack --ctstate DNAT,ESTABLISHED,RELATED -j ACCEPT",
            "-A FORWARD -i ext -j DROP",
        ] {
            rules.push(r.split(' ').map(String::from).collect());
        }
        for r in rules {
            let args: Vec<&str> = r.iter().map(String::as_str).collect();
            self.iptables(gw, &args)?;
        }
        Ok(())
    }

    /// A bridge in the gateway with the gateway's address on its subnet.
    fn bridge(&self, gw: &str, name: &str, address: &str) -> Result<(), LabError> {
        self.ip_in(gw, &["link", "add", name, "type", "bridge"])?;
        self.ip_in(gw, &["addr", "add", &format!("{address}/24"), "dev", name])?;
        self.ip_in(gw, &["link", "set", name, "up"])
    }

    /// Namespace `ns` on a veth pair (`port` in the gateway, `eth0` in `ns`) to `bridge`,
    /// with `address` and a default route through `via`.
    fn member(
        &self,
        ns: &str,
        port: &str,
        bridge: &str,
        address: &str,
        via: &str,
    ) -> Result<(), LabError> {
        let gw = lab::gateway_ns(&self.name);
        self.ip(&["netns", "add", ns])?;
        self.ip_in(
            &gw,
            &[
                "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns,
            ],
        )?;
        self.ip_in(&gw, &["link", "set", port, "master", bridge, "up"])?;
        self.ip_in(ns, &["link", "set", "lo", "up"])?;
        self.ip_in(
            ns,
            &["addr", "add", &format!("{address}/24"), "dev", "eth0"],
        )?;
        self.ip_in(ns, &["link", "set", "eth0", "up"])?;
        self.ip_in(ns, &["route", "add", "default", "via", via])
    }

    /// A token bucket of `mbit` Mbit/s on `dev`'s egress.
    fn limit(&self, ns: &str, dev: &str, mbit: u32) -> Result<(), LabError> {
        let rate = format!("{mbit}mbit");
        self.run(Command::new("tc").args([
            "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", &rate, "burst", "256kb",
            "latency", "100ms",
        ]))
    }

    /// Takes the lab down: every namespace of it that exists is deleted (with its links,
    /// addresses and rules). Nothing there is not an error.
    pub fn destroy(&self) -> Result<(), LabError> {
        let mut first_error = None;
        for ns in self.namespaces().iter().rev() {
            if crate::netns::exists(ns)
                && let Err(e) = self.ip(&["netns", "del", ns])
            {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The namespaces of the lab that exist now.
    pub fn present(&self) -> Vec<String> {
        self.namespaces()
            .into_iter()
            .filter(|n| crate::netns::exists(n))
            .collect()
    }

    /// Cuts node `index` off from every other node and every loader (its link to the
    /// gateway goes down); [`Lab::heal`] brings it back.
    pub fn partition(&self, index: usize) -> Result<(), LabError> {
        self.node_link(index, "down")
    }

    pub fn heal(&self, index: usize) -> Result<(), LabError> {
        self.node_link(index, "up")
    }

    fn node_link(&self, index: usize, state: &str) -> Result<(), LabError> {
        if !self.nodes.iter().any(|n| n.index == index) {
            return Err(LabError::NoSuch {
                lab: self.name.clone(),
                what: format!("node{index}"),
            });
        }
        let gw = lab::gateway_ns(&self.name);
        self.ip_in(&gw, &["link", "set", &format!("n{index}"), state])
    }

    /// Cuts data centre `dc_index` off from the other data centres and the loaders; its own
    /// nodes still reach each other. [`Lab::rejoin`] undoes it.
    pub fn isolate(&self, dc_index: usize) -> Result<(), LabError> {
        self.dc_rules(dc_index, "-I")
    }

    pub fn rejoin(&self, dc_index: usize) -> Result<(), LabError> {
        self.dc_rules(dc_index, "-D")
    }

    fn dc_rules(&self, dc_index: usize, op: &str) -> Result<(), LabError> {
        if !self.dcs().contains(&dc_index) {
            return Err(LabError::NoSuch {
                lab: self.name.clone(),
                what: format!("data centre #{}", dc_index + 1),
            });
        }
        let gw = lab::gateway_ns(&self.name);
        let br = format!("dc{dc_index}");
        // Traffic within the bridge is not routed; these match only what crosses it (and,
        // should the bridge pass its frames through iptables, exclude its own).
        self.iptables(
            &gw,
            &[op, "FORWARD", "-i", &br, "!", "-o", &br, "-j", "DROP"],
        )?;
        self.iptables(
            &gw,
            &[op, "FORWARD", "!", "-i", &br, "-o", &br, "-j", "DROP"],
        )
    }

    fn ip(&self, args: &[&str]) -> Result<(), LabError> {
        self.run(Command::new("ip").args(args))
    }

    fn ip_in(&self, ns: &str, args: &[&str]) -> Result<(), LabError> {
        self.run(Command::new("ip").arg("-n").arg(ns).args(args))
    }

    fn sysctl(&self, ns: &str, setting: &str) -> Result<(), LabError> {
        let (key, value) = setting.split_once('=').unwrap_or((setting, "1"));
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        // Written from a thread inside the namespace: /proc/sys/net is the namespace's own.
        crate::netns::run_in(ns, || {
            std::fs::write(&path, value).map_err(|e| e.to_string())
        })
        .map_err(|e| e.to_string())
        .and_then(|written| written)
        .map_err(|e| self.step(&format!("sysctl {setting} in {ns}"), e))
    }

    fn iptables(&self, ns: &str, args: &[&str]) -> Result<(), LabError> {
        let bin = iptables().ok_or_else(|| self.missing("iptables", "iptables"))?;
        let mut cmd = Command::new(bin);
        cmd.args(["-w"]).args(args);
        crate::netns::in_child(&mut cmd, ns)
            .map_err(|e| self.step(&format!("iptables in {ns}"), e.to_string()))?;
        self.run(&mut cmd)
    }

    fn run(&self, cmd: &mut Command) -> Result<(), LabError> {
        let shown = shown(cmd);
        let out = cmd
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| self.step(&shown, e.to_string()))?;
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let detail = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no message")
            .to_string();
        Err(self.step(&shown, format!("{detail} ({})", out.status)))
    }

    fn step(&self, command: &str, detail: String) -> LabError {
        LabError::Step {
            lab: self.name.clone(),
            command: command.into(),
            detail,
        }
    }

    fn missing(&self, tool: &str, package: &str) -> LabError {
        LabError::Missing {
            lab: self.name.clone(),
            tool: tool.into(),
            package: package.into(),
        }
    }

    /// The tools a lab needs, each found.
    fn tools(&self) -> Result<(), LabError> {
        if which("ip").is_none() {
            return Err(self.missing("ip", "iproute2"));
        }
        if self.spec.link_mbit.is_some() && which("tc").is_none() {
            return Err(self.missing("tc", "iproute2"));
        }
        if iptables().is_none() {
            return Err(self.missing("iptables", "iptables"));
        }
        Ok(())
    }
}

/// A command as a person would type it, for errors.
fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `tool` on PATH or in the system directories root's PATH usually has.
fn which(tool: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(std::path::PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The iptables to use: `iptables`, else the legacy or nft variant Debian installs beside it.
fn iptables() -> Option<std::path::PathBuf> {
    ["iptables", "iptables-legacy", "iptables-nft"]
        .into_iter()
        .find_map(which)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab() -> Lab {
        Lab::new(
            "t",
            LabSpec::default(),
            vec![
                LabNode {
                    index: 1,
                    dc_index: 0,
                },
                LabNode {
                    index: 2,
                    dc_index: 1,
                },
                LabNode {
                    index: 3,
                    dc_index: 1,
                },
            ],
        )
    }

    #[test]
    fn namespaces_are_the_gateway_nodes_and_loaders() {
        assert_eq!(
            lab().namespaces(),
            [
                "cqb-t", "cqb-t-n1", "cqb-t-n2", "cqb-t-n3", "cqb-t-c1", "cqb-t-c2", "cqb-t-x1"
            ]
        );
        assert_eq!(lab().dcs(), [0, 1]);
    }

    #[test]
    fn faults_on_what_the_lab_lacks_are_refused_before_any_command() {
        let e = lab().partition(4).unwrap_err().to_string();
        assert_eq!(e, "network lab 't': it has no node4");
        let e = lab().isolate(2).unwrap_err().to_string();
        assert_eq!(e, "network lab 't': it has no data centre #3");
    }

    #[test]
    fn a_failed_command_is_one_line_with_its_words() {
        let l = lab();
        let e = l
            .run(Command::new("sh").args(["-c", r#"printf '%s\n%s\n' first second >&2; exit 3"#]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("network lab 't': `sh -c"), "{e}");
        assert!(e.ends_with(": first (exit status: 3)"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
