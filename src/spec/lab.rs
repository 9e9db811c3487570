//! A network lab (`cluster create --netns`): each node in a network namespace of its own, the
//! loaders in others, all joined by a router namespace — the lab's gateway — that also
//! exposes the nodes to an "outside" subnet only through NAT, as a load balancer, a NodePort
//! or `kubectl port-forward` would. Names and addresses here are pure functions of the lab's
//! name and the node's place; `crate::lab` builds them.
//!
//! Addresses come from the benchmarking range 198.18.0.0/15 (RFC 2544) and exist only inside
//! the lab's namespaces:
//!
//! | what | subnet | addresses |
//! |---|---|---|
//! | data centre d (0-based) | 198.18.d.0/24 | gateway .1, node i at .(10+i) |
//! | the loaders inside | 198.18.200.0/24 | gateway .1, client k at .(10+k) |
//! | the outside | 198.19.0.0/24 | gateway .1, outside client k at .(10+k) |
//! | NAT'd contact points | 198.19.1.0/24 | node i's CQL at 198.19.1.i:9042 |
//!
//! and 198.19.0.1:9042, the gateway's own address, forwards to node 1's CQL port (one
//! port-forwarded node).

use serde::{Deserialize, Serialize};

use crate::error::Invalid;

/// Most loader namespaces of either kind a lab has.
pub const MAX_CLIENTS: usize = 8;

/// The subnets' third octet of the loaders inside.
const CLIENT_OCTET: u8 = 200;

/// A lab's shape, persisted in its cluster's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabSpec {
    /// Loader namespaces inside the network, routed to every node (`cqb-NAME-c1`, …).
    pub clients: usize,
    /// Loader namespaces outside, reaching the nodes only through NAT (`cqb-NAME-x1`, …).
    pub outside: usize,
    /// Each node's link limited to this many Mbit/s each way (`tc tbf`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_mbit: Option<u32>,
}

impl Default for LabSpec {
    fn default() -> Self {
        LabSpec {
            clients: 2,
            outside: 1,
            link_mbit: None,
        }
    }
}

impl LabSpec {
    pub fn check(&self) -> Result<(), Invalid> {
        if !(1..=MAX_CLIENTS).contains(&self.clients) {
            return Err(crate::invalid!(
                "--netns-clients {}: give 1 to {MAX_CLIENTS}",
                self.clients
            ));
        }
        if self.outside > MAX_CLIENTS {
            return Err(crate::invalid!(
                "--netns-outside {}: give 0 to {MAX_CLIENTS}",
                self.outside
            ));
        }
        if self.link_mbit == Some(0) {
            return Err(crate::invalid!(
                "--netns-link-mbit 0: give a rate of at least 1 Mbit/s"
            ));
        }
        Ok(())
    }
}

/// The lab's router and gateway: it holds the bridges and the NAT rules.
pub fn gateway_ns(lab: &str) -> String {
    format!("cqb-{lab}")
}

/// Node `index` (1-based)'s namespace.
pub fn node_ns(lab: &str, index: usize) -> String {
    format!("cqb-{lab}-n{index}")
}

/// Loader namespace `k` (1-based) inside the network.
pub fn client_ns(lab: &str, k: usize) -> String {
    format!("cqb-{lab}-c{k}")
}

/// Loader namespace `k` (1-based) outside, behind the NAT.
pub fn outside_ns(lab: &str, k: usize) -> String {
    format!("cqb-{lab}-x{k}")
}

/// Node `index` (1-based) of data centre `dc_index` (0-based).
pub fn node_address(dc_index: usize, index: usize) -> String {
    format!("198.18.{dc_index}.{}", 10 + index)
}

/// The gateway's address on data centre `dc_index`'s subnet.
pub fn dc_gateway(dc_index: usize) -> String {
    format!("198.18.{dc_index}.1")
}

/// The address of loader `k` inside.
pub fn client_address(k: usize) -> String {
    format!("198.18.{CLIENT_OCTET}.{}", 10 + k)
}

/// The gateway's address on the loaders' subnet.
pub fn client_gateway() -> String {
    format!("198.18.{CLIENT_OCTET}.1")
}

/// The address of loader `k` outside.
pub fn outside_address(k: usize) -> String {
    format!("198.19.0.{}", 10 + k)
}

/// The gateway's address on the outside subnet: its port 9042 forwards to node 1.
pub fn outside_gateway() -> String {
    "198.19.0.1".into()
}

/// Node `index`'s NAT'd contact point, seen from outside.
pub fn nat_address(index: usize) -> String {
    format!("198.19.1.{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_stay_in_the_benchmarking_range_and_do_not_collide() {
        let mut all = vec![
            dc_gateway(0),
            dc_gateway(1),
            client_gateway(),
            outside_gateway(),
        ];
        for i in 1..=crate::spec::lab::MAX_CLIENTS {
            all.push(client_address(i));
            all.push(outside_address(i));
        }
        for i in 1..=99 {
            all.push(node_address(i % 3, i));
            all.push(nat_address(i));
        }
        for a in &all {
            let ip: std::net::Ipv4Addr = a.parse().unwrap();
            assert_eq!(ip.octets()[0], 198, "{a}");
            assert!(matches!(ip.octets()[1], 18 | 19), "{a}");
        }
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
        assert_eq!(node_address(1, 4), "198.18.1.14");
        assert_eq!(nat_address(2), "198.19.1.2");
    }

    #[test]
    fn namespace_names_are_valid_for_the_longest_cluster_name() {
        let long = "x".repeat(48);
        for n in [
            gateway_ns(&long),
            node_ns(&long, 99),
            client_ns(&long, MAX_CLIENTS),
            outside_ns(&long, MAX_CLIENTS),
        ] {
            assert!(crate::netns::valid_name(&n), "{n}");
        }
    }

    #[test]
    fn shapes_out_of_range_are_refused() {
        assert!(LabSpec::default().check().is_ok());
        for bad in [
            LabSpec {
                clients: 0,
                ..LabSpec::default()
            },
            LabSpec {
                outside: 9,
                ..LabSpec::default()
            },
            LabSpec {
                link_mbit: Some(0),
                ..LabSpec::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
