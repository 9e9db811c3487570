//! Rendering a node's files from its plan: cassandra.yaml, cassandra-rackdc.properties,
//! logback.xml, the JMX exporter config and the JVM command line. Pure: paths come in as
//! arguments, nothing is read or written here.

use std::path::Path;

use crate::yaml::{Mapping, Value};

use super::dist::Distribution;
use super::plan::{ClusterPlan, NATIVE_PORT, NodePlan, STORAGE_PORT};
use super::versions::Line;
use crate::spec::{ClusterSpec, Gc};

/// The Cassandra main class.
pub const DAEMON_CLASS: &str = "org.apache.cassandra.service.CassandraDaemon";

/// Module access Cassandra 5.0 needs on JDK 17 (its `jvm17-server.options`).
pub const JDK17_MODULE_ARGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.math=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
];

/// MBeans the exporter publishes: only what cqlbench samples (the default publishes ~57,000
/// series per node and takes ~0.75 s a scrape). Every MBean listed is read at every scrape, and
/// on a saturated node each one lengthens the scrape, so the list holds what is read and no
/// more: no latency timers (each attribute recomputes a histogram snapshot), no failure
/// detector, no GC MBeans (GC time comes from the exporter's own JVM metrics), and dropped
/// messages only for the verbs that carry client requests and their replicas' work (75 verbs
/// and legacy aliases of the same meters otherwise, which summed would also count twice).
pub const EXPORTED_MBEANS: &[&str] = &[
    "org.apache.cassandra.metrics:type=Compaction,name=PendingTasks",
    "org.apache.cassandra.metrics:type=Compaction,name=CompletedTasks",
    "org.apache.cassandra.metrics:type=Compaction,name=BytesCompacted",
    "org.apache.cassandra.metrics:type=Storage,name=Load",
    "org.apache.cassandra.metrics:type=Table,name=SSTablesPerReadHistogram",
    "org.apache.cassandra.metrics:type=Table,name=LiveSSTableCount",
    "org.apache.cassandra.metrics:type=Table,name=ReadLatency",
    "org.apache.cassandra.metrics:type=Table,name=ReadTotalLatency",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=MUTATION_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=MUTATION_RSP,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=READ_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=READ_RSP,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=RANGE_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=RANGE_RSP,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=COUNTER_MUTATION_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=READ_REPAIR_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=HINT_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=BATCH_STORE_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=PAXOS_PREPARE_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=PAXOS_PROPOSE_REQ,name=Dropped",
    "org.apache.cassandra.metrics:type=DroppedMessage,scope=PAXOS_COMMIT_REQ,name=Dropped",
    "java.lang:type=Memory",
    "java.lang:type=OperatingSystem",
];

/// Where a node's files live.
#[derive(Debug, Clone)]
pub struct NodePaths<'a> {
    pub node_dir: &'a Path,
    pub conf_dir: &'a Path,
    pub data_dir: &'a Path,
    pub log_dir: &'a Path,
    /// The cluster's certificates (`--tls`).
    pub tls_dir: &'a Path,
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn dir(p: &Path, sub: &str) -> Value {
    s(&p.join(sub).to_string_lossy())
}

/// cassandra.yaml for one node. Settings not listed keep Cassandra's built-in defaults;
/// the spec's overrides replace or add top-level keys.
pub fn cassandra_yaml(
    spec: &ClusterSpec,
    plan: &ClusterPlan,
    node: &NodePlan,
    paths: &NodePaths,
    line: Line,
) -> String {
    let mut m = Mapping::new();
    let mut put = |k: &str, v: Value| {
        m.insert(String::from(k), v);
    };
    put("cluster_name", s(&spec.name));
    match node.vnode_tokens.as_slice() {
        [] => {
            put("num_tokens", Value::from(1));
            put("initial_token", s(&node.token.to_string()));
        }
        tokens => {
            put("num_tokens", Value::from(tokens.len()));
            let list: Vec<String> = tokens.iter().map(i64::to_string).collect();
            put("initial_token", s(&list.join(",")));
        }
    }
    put("allocate_tokens_for_local_replication_factor", Value::Null);
    put(
        "partitioner",
        s("org.apache.cassandra.dht.Murmur3Partitioner"),
    );
    put("auto_bootstrap", Value::Bool(false));
    put("listen_address", s(&node.address));
    put("rpc_address", s(&node.address));
    put("native_transport_port", Value::from(NATIVE_PORT));
    put("storage_port", Value::from(STORAGE_PORT));
    let mut seed_params = Mapping::new();
    seed_params.insert(String::from("seeds"), s(&plan.seeds().join(",")));
    let mut seed_provider = Mapping::new();
    seed_provider.insert(
        String::from("class_name"),
        s("org.apache.cassandra.locator.SimpleSeedProvider"),
    );
    seed_provider.insert(
        String::from("parameters"),
        Value::Array(vec![Value::Object(seed_params)]),
    );
    put(
        "seed_provider",
        Value::Array(vec![Value::Object(seed_provider)]),
    );
    put("endpoint_snitch", s("GossipingPropertyFileSnitch"));
    put(
        "data_file_directories",
        Value::Array(vec![dir(paths.data_dir, "data")]),
    );
    put("commitlog_directory", dir(paths.data_dir, "commitlog"));
    put(
        "saved_caches_directory",
        dir(paths.data_dir, "saved_caches"),
    );
    put("hints_directory", dir(paths.data_dir, "hints"));
    put("cdc_raw_directory", dir(paths.data_dir, "cdc_raw"));
    put("commitlog_sync", s("periodic"));
    let (period_key, period) = line.commitlog_sync_period();
    put(period_key, period);
    // Local clusters are recreated often: no snapshot on drop/truncate keeps disks clean.
    put("auto_snapshot", Value::Bool(false));
    if let Some(t) = &spec.tls {
        let ca = crate::tls::LocalCa::at(paths.tls_dir);
        let options = |optional: bool, client_auth: bool| {
            let mut factory = Mapping::new();
            factory.insert(
                String::from("class_name"),
                s("org.apache.cassandra.security.PEMBasedSslContextFactory"),
            );
            let mut o = Mapping::new();
            o.insert(String::from("ssl_context_factory"), Value::Object(factory));
            o.insert(
                String::from("keystore"),
                s(&ca.node_keystore(node.index).to_string_lossy()),
            );
            o.insert(String::from("truststore"), s(&ca.ca().to_string_lossy()));
            o.insert(
                String::from("require_client_auth"),
                Value::Bool(client_auth),
            );
            o.insert(String::from("optional"), Value::Bool(optional));
            o
        };
        let mut client = options(t.optional, t.client_auth);
        client.insert(String::from("enabled"), Value::Bool(true));
        put("client_encryption_options", Value::Object(client));
        if t.internode {
            let mut server = options(false, true);
            server.insert(String::from("internode_encryption"), s("all"));
            put("server_encryption_options", Value::Object(server));
        }
    }
    for (k, v) in &spec.yaml_overrides {
        m.insert(String::from(k), v.clone());
    }
    m.retain(|_, v| !v.is_null());
    let mut out = format!(
        "# Rendered by cqlbench for {} of cluster {}. Edits are overwritten at start.\n",
        node.name, spec.name
    );
    out.push_str(&crate::yaml::to_string(&m));
    out
}

/// cassandra-rackdc.properties for GossipingPropertyFileSnitch.
pub fn rackdc_properties(node: &NodePlan) -> String {
    format!("dc={}\nrack={}\n", node.dc, node.rack)
}

/// logback.xml: the node's log in `<log_dir>/system.log`, INFO and above.
pub fn logback_xml(log_dir: &Path) -> String {
    format!(
        r#"<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{}/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"#,
        log_dir.display()
    )
}

/// logback.xml for tools (nodetool): warnings only, on stderr.
pub fn tools_logback_xml() -> String {
    r#"<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
"#
    .to_string()
}

/// The JMX exporter's config, restricted to [`EXPORTED_MBEANS`].
pub fn exporter_yaml() -> String {
    let mut out = String::from(
        "lowercaseOutputName: true\nlowercaseOutputLabelNames: true\nincludeObjectNames:\n",
    );
    for b in EXPORTED_MBEANS {
        out.push_str(&format!("  - \"{b}\"\n"));
    }
    out
}

/// GC flags per collector; G1 uses reference 000's. ZGC is experimental on Java 11.
pub fn gc_args(gc: Gc, java_major: Option<u32>) -> Vec<String> {
    let v: &[&str] = match gc {
        Gc::G1 => &[
            "-XX:+UseG1GC",
            "-XX:G1RSetUpdatingPauseTimePercent=5",
            "-XX:MaxGCPauseMillis=300",
            "-XX:InitiatingHeapOccupancyPercent=70",
            "-XX:+ParallelRefProcEnabled",
        ],
        Gc::Zgc if java_major.is_some_and(|m| m < 15) => {
            &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"]
        }
        Gc::Zgc => &["-XX:+UseZGC"],
        Gc::Parallel => &["-XX:+UseParallelGC"],
    };
    v.iter().map(|a| a.to_string()).collect()
}

/// The JVM arguments of a node, up to and including the main class. The classpath is the jars
/// alone (`<lib_dir>/*`), the same for every node, so one class-data-sharing archive serves
/// them all; each node's files are named by system properties instead. The module options are
/// 5.0's for Java 17; Java 11 accepts the same (4.0 and 4.1 need fewer of them).
pub fn jvm_args(
    spec: &ClusterSpec,
    node: &NodePlan,
    paths: &NodePaths,
    dist: &Distribution,
    cds: Option<&super::cds::Cds>,
) -> Vec<String> {
    let (lib_dir, exporter_jar) = (&dist.lib_dir, &dist.exporter_jar);
    let mut a: Vec<String> = vec![
        format!("-Xms{}M", node.heap.0),
        format!("-Xmx{}M", node.heap.0),
    ];
    if let Some(ng) = node.new_gen {
        a.push(format!("-Xmn{}M", ng.0));
    }
    a.extend(gc_args(spec.jvm.gc, dist.java_major()));
    a.extend(
        [
            "-Xss256k",
            "-XX:+HeapDumpOnOutOfMemoryError",
            "-XX:+ExitOnOutOfMemoryError",
            "-XX:+PerfDisableSharedMem",
            "-Djava.net.preferIPv4Stack=true",
            "-Djdk.attach.allowAttachSelf=true",
            "-Dcassandra-foreground=yes",
            "-Dcassandra.skip_wait_for_gossip_to_settle=0",
            "-Dcassandra.ring_delay_ms=10000",
            "-Dcassandra.max_local_pause_in_ms=5000",
            // The memtable's per-row heap overhead is estimated at start by building rows:
            // 100,000 by default, ~3.9 s of CPU per node here (a quarter of a 3-node start on
            // 2 cores). 1,000 rows gave 180 bytes against 181, the value Cassandra's own test
            // harness accepts with 100.
            "-Dcassandra.memtable_row_overhead_computation_step=1000",
        ]
        .map(String::from),
    );
    a.extend(JDK17_MODULE_ARGS.iter().map(|s| s.to_string()));
    let conf = paths.conf_dir.display();
    a.push(format!("-Dcassandra.config=file://{conf}/cassandra.yaml"));
    a.push(format!("-Dlogback.configurationFile={conf}/logback.xml"));
    a.push(format!(
        "-Dcassandra-rackdc.properties=file://{conf}/cassandra-rackdc.properties"
    ));
    a.push(format!("-Dcassandra.logdir={}", paths.log_dir.display()));
    a.push(format!(
        "-Dcassandra.storagedir={}",
        paths.data_dir.display()
    ));
    a.push(format!("-Dcassandra.jmx.local.port={}", node.jmx_port));
    a.push(format!("-XX:HeapDumpPath={}", paths.node_dir.display()));
    if let Some(shim) = &dist.http_shim {
        a.extend(super::jdk::http_shim_args(shim));
    }
    a.push(format!(
        "-javaagent:{}={}:{}:{conf}/exporter.yaml",
        exporter_jar.display(),
        node.address,
        node.metrics_port
    ));
    if let Some(c) = cds {
        a.extend(c.args());
    }
    a.extend(spec.jvm.extra_args.iter().cloned());
    a.push("-cp".into());
    a.push(format!("{}/*", lib_dir.display()));
    a.push(DAEMON_CLASS.into());
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::plan::plan;
    use crate::spec::MiB;
    use std::path::PathBuf;

    fn golden(name: &str, actual: &str) {
        crate::testutil::assert_golden(&format!("src/cluster/golden/{name}"), actual);
    }

    fn fixture() -> (ClusterSpec, ClusterPlan) {
        let mut spec = crate::cluster::plan::tests::spec("dc1:2:2,dc2:1", Some(256));
        spec.jvm.new_gen = Some(MiB(64));
        spec.jvm.extra_args = vec!["-XX:+UnlockDiagnosticVMOptions".into()];
        spec.yaml_overrides
            .insert("concurrent_writes".into(), Value::from(16));
        let p = plan(&spec, 24 << 30, 2).unwrap();
        (spec, p)
    }

    fn dist(java_version: &str, http_shim: Option<&str>) -> Distribution {
        Distribution {
            version: "5.0.9".into(),
            lib_dir: "/cache/lib".into(),
            exporter_jar: "/cache/exporter.jar".into(),
            java: "/jdk/bin/java".into(),
            java_version: java_version.into(),
            tools_java: PathBuf::new(),
            http_shim: http_shim.map(PathBuf::from),
            cache: "/cache".into(),
        }
    }

    #[test]
    fn each_line_gets_its_own_keys_and_java_11_its_options() {
        let (mut spec, p) = fixture();
        let (n, c, d, l) = paths(Path::new("/x"));
        let np = NodePaths {
            node_dir: &n,
            conf_dir: &c,
            data_dir: &d,
            log_dir: &l,
            tls_dir: Path::new("/c/tls"),
        };
        let y40: Value =
            crate::yaml::from_str(&cassandra_yaml(&spec, &p, &p.nodes[0], &np, Line::V40)).unwrap();
        assert_eq!(y40["commitlog_sync_period_in_ms"], Value::from(10_000));
        assert!(y40.get("commitlog_sync_period").is_none());
        // Every key rendered for a line is one the line knows.
        for line in crate::cluster::versions::LINES {
            let y: Value =
                crate::yaml::from_str(&cassandra_yaml(&spec, &p, &p.nodes[0], &np, line)).unwrap();
            for k in y.as_object().unwrap().keys() {
                let k = k.as_str();
                assert!(line.knows_key(k), "{line} does not know {k}");
            }
        }
        // The fetched Java 11 runtime: the HTTP server shim before the agent; ZGC unlocked.
        spec.jvm.gc = Gc::Zgc;
        let a = jvm_args(
            &spec,
            &p.nodes[0],
            &np,
            &dist("11.0.13", Some("/c/http.jar")),
            None,
        );
        let agent = a.iter().position(|x| x.starts_with("-javaagent:")).unwrap();
        let shim = a
            .iter()
            .position(|x| x == "-Xbootclasspath/a:/c/http.jar")
            .unwrap();
        assert!(shim < agent);
        assert!(
            a.iter()
                .any(|x| x.starts_with("-Dcom.sun.net.httpserver.HttpServerProvider="))
        );
        let unlock = a
            .iter()
            .position(|x| x == "-XX:+UnlockExperimentalVMOptions");
        let zgc = a.iter().position(|x| x == "-XX:+UseZGC").unwrap();
        assert!(unlock.is_some_and(|u| u < zgc));
        let a17 = jvm_args(&spec, &p.nodes[0], &np, &dist("17.0.15", None), None);
        assert!(!a17.iter().any(|x| x.starts_with("-Xbootclasspath")));
        assert!(!a17.iter().any(|x| x == "-XX:+UnlockExperimentalVMOptions"));
    }

    fn paths(root: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
        (
            root.to_path_buf(),
            root.join("conf"),
            root.join("data"),
            root.join("logs"),
        )
    }

    #[test]
    fn renders_node_files_like_the_golden_files() {
        let (spec, p) = fixture();
        let (n, c, d, l) = paths(Path::new("/clusters/t/node3"));
        let np = NodePaths {
            node_dir: &n,
            conf_dir: &c,
            data_dir: &d,
            log_dir: &l,
            tls_dir: Path::new("/c/tls"),
        };
        let node = &p.nodes[2];
        golden(
            "node3-cassandra.yaml",
            &cassandra_yaml(&spec, &p, node, &np, Line::V50),
        );
        golden("node3-rackdc.properties", &rackdc_properties(node));
        golden("exporter.yaml", &exporter_yaml());
        let args = jvm_args(
            &spec,
            node,
            &np,
            &dist("17.0.15", None),
            Some(&super::super::cds::Cds::Use(
                "/cache/cds/lib-jdk1.jsa".into(),
            )),
        );
        golden("node3-jvm-args.txt", &(args.join("\n") + "\n"));
    }

    #[test]
    fn rendered_yaml_parses_and_overrides_win() {
        let (spec, p) = fixture();
        let (n, c, d, l) = paths(Path::new("/x"));
        let np = NodePaths {
            node_dir: &n,
            conf_dir: &c,
            data_dir: &d,
            log_dir: &l,
            tls_dir: Path::new("/c/tls"),
        };
        let y: Value =
            crate::yaml::from_str(&cassandra_yaml(&spec, &p, &p.nodes[0], &np, Line::V50)).unwrap();
        assert_eq!(y["concurrent_writes"], Value::from(16));
        assert_eq!(y["listen_address"], s("127.0.0.1"));
        assert_eq!(y["initial_token"], s(&i64::MIN.to_string()));
        assert_eq!(y["num_tokens"], Value::from(1));
        // Vnodes: the planned tokens, listed.
        let mut v = spec.clone();
        v.vnodes = 4;
        let vp = crate::cluster::plan::plan(&v, 24 << 30, 2).unwrap();
        let y: Value =
            crate::yaml::from_str(&cassandra_yaml(&v, &vp, &vp.nodes[0], &np, Line::V50)).unwrap();
        assert_eq!(y["num_tokens"], Value::from(4));
        let listed: Vec<i64> = y["initial_token"]
            .as_str()
            .unwrap()
            .split(',')
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(listed, vp.nodes[0].vnode_tokens);
        assert_eq!(
            y["seed_provider"][0]["parameters"][0]["seeds"],
            s("127.0.0.1:7000,127.0.0.2:7000,127.0.0.3:7000")
        );
        assert!(
            y.get("allocate_tokens_for_local_replication_factor")
                .is_none()
        );
    }
}
