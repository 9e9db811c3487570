use super::*;

const INSTANCE: &str = "hours_per_month: 730\ninstances:\n  - name: r5.2xlarge\n    provider: aws\n    region: us-east-1\n    vcpus: 8\n    ram_gb: 64\n    usd_per_hour: 0.504\n    source: test\n    date: 2024-06\n";

fn err(text: &str) -> String {
    parse_catalog(text, "catalog.yaml").unwrap_err().to_string()
}

#[test]
fn the_built_in_catalogue_is_valid_and_complete() {
    let cat = default_catalog().unwrap();
    assert_eq!(cat.hours_per_month, 730.0);
    for name in [
        "r5.2xlarge",
        "i3.2xlarge",
        "hi1.4xlarge",
        "n2-highmem-8",
        "Standard_E8s_v4",
    ] {
        cat.instance(name).unwrap();
    }
    for name in [
        "gp2",
        "gp3",
        "io1",
        "io2",
        "st1",
        "sc1",
        "pd-standard",
        "pd-balanced",
    ] {
        cat.disk(name).unwrap();
    }
    for name in [
        "pd-ssd",
        "pd-extreme",
        "standard-hdd",
        "standard-ssd",
        "premium-ssd",
        "ultra-disk",
    ] {
        cat.disk(name).unwrap();
    }
    for name in ["eks", "gke", "aks"] {
        cat.kubernetes(name).unwrap();
    }
    assert!(cat.instances.iter().all(|i| !i.source.source.is_empty()));
}

#[test]
fn a_minimal_catalogue_parses() {
    let cat = parse_catalog(INSTANCE, "catalog.yaml").unwrap();
    assert_eq!(cat.instances[0].vcpus, 8);
    assert!(cat.disks.is_empty());
}

#[test]
fn a_bad_field_names_the_entry_and_the_field() {
    assert_eq!(
        err(&INSTANCE.replace("vcpus: 8", "vcpus: eight")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"vcpus\": expected a positive integer"
    );
    assert_eq!(
        err(&INSTANCE.replace("vcpus: 8", "vcpus: 0")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"vcpus\": expected a positive integer"
    );
    assert_eq!(
        err(&INSTANCE.replace("usd_per_hour: 0.504", "usd_per_hour: -1")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"usd_per_hour\": expected a positive number"
    );
    assert_eq!(
        err(&INSTANCE.replace("    date: 2024-06\n", "")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"date\": missing"
    );
    assert_eq!(
        err(&INSTANCE.replace("date: 2024-06", "date: June 2024")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"date\": expected YYYY-MM or YYYY-MM-DD"
    );
    assert_eq!(
        err(&INSTANCE.replace("provider: aws", "provider: ibm")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"provider\": expected aws, gcp or azure"
    );
    let e = err(&INSTANCE.replace("ram_gb: 64", "ram_gb: 64\n    ram_gib: 64"));
    assert!(
        e.starts_with("catalog.yaml: instance \"r5.2xlarge\": field \"ram_gib\": unknown field"),
        "{e}"
    );
}

#[test]
fn an_entry_without_a_name_is_named_by_position() {
    let text = INSTANCE.replace("  - name: r5.2xlarge\n    provider", "  - provider");
    assert_eq!(
        err(&text),
        "catalog.yaml: instance #1: field \"name\": missing"
    );
}

#[test]
fn disk_errors_name_the_disk() {
    let disk = "hours_per_month: 730\ndisks:\n  - {name: gp9, provider: aws, formula: gp9, source: s, date: 2024-01}\n";
    let e = err(disk);
    assert!(
        e.starts_with("catalog.yaml: disk \"gp9\": field \"formula\": expected one of gp2"),
        "{e}"
    );
    let tiers = "hours_per_month: 730\ndisks:\n  - name: premium-ssd\n    provider: azure\n    formula: azure_tiers\n    source: s\n    date: 2024-01\n    tiers:\n      - {name: P10, size_gb: 128, usd_per_month: 17.92, iops: 500}\n";
    assert_eq!(
        err(tiers),
        "catalog.yaml: disk \"premium-ssd\" tier \"P10\": field \"mbps\": missing"
    );
    let io = "hours_per_month: 730\ndisks:\n  - {name: io2, provider: aws, formula: provisioned_iops, usd_per_gb_month: 0.125, min_iops: 100, max_iops: 1000, max_iops_per_gb: 50, mbps_per_iops: 0.25, max_mbps: 1000, max_gb: 100, source: s, date: 2024-01, iops_tiers: [{usd_per_iops_month: 0.065}, {up_to_iops: 5, usd_per_iops_month: 0.01}]}\n";
    assert_eq!(
        err(io),
        "catalog.yaml: disk \"io2\" iops tier #1: field \"up_to_iops\": expected a bound on every tier but the last"
    );
}

#[test]
fn whole_file_problems() {
    assert!(err("instances: [").starts_with("catalog.yaml: not valid YAML"));
    assert_eq!(
        err("- 1\n- 2\n"),
        "catalog.yaml: expected a mapping with instances, disks, kubernetes, …"
    );
    let twice = format!(
        "{INSTANCE}{}",
        &INSTANCE[INSTANCE.find("  - name").unwrap()..]
    );
    assert_eq!(
        err(&twice),
        "catalog.yaml: instance \"r5.2xlarge\" is listed twice"
    );
    let cap = format!(
        "{INSTANCE}capacities:\n  - {{instance: m9.huge, ops_per_s_per_node: 10, source: s, date: 2024-01}}\n"
    );
    assert_eq!(
        err(&cap),
        "catalog.yaml: capacity \"m9.huge\": field \"instance\": no instance of that name in the catalogue"
    );
}

/// What serde refuses is told in the catalogue's words, naming the item of a nested list.
#[test]
fn nested_items_and_shapes_are_named_in_the_catalogues_words() {
    assert_eq!(
        err(&INSTANCE.replace("ram_gb: 64", "ram_gib: 64")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"ram_gib\": unknown field (known: name, \
         provider, region, vcpus, ram_gb, local_disk_gb, local_disk_kind, usd_per_hour, \
         sustained_use_discount, reserved, note, source, date)"
    );
    assert_eq!(
        err(&format!(
            "{INSTANCE}    reserved:\n      - {{term: 1y, usd_per_hour: 0.3, source: s}}\n"
        )),
        "catalog.yaml: instance \"r5.2xlarge\" reserved #1: field \"date\": missing"
    );
    assert_eq!(
        err(&format!("{INSTANCE}    reserved: 5\n")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"reserved\": expected a list"
    );
    let tiers = "hours_per_month: 730\ndisks:\n  - {name: az, provider: azure, formula: azure_tiers, source: s, date: 2024-01, tiers: [5]}\n";
    assert_eq!(
        err(tiers),
        "catalog.yaml: disk \"az\" tier #1: expected a mapping of fields"
    );
    assert_eq!(
        err("hours_per_month: 730\ndisks: [7]\n"),
        "catalog.yaml: disk #1: expected a mapping of fields"
    );
    assert_eq!(
        err(&format!("{INSTANCE}    local_disk_gb: 10\n")),
        "catalog.yaml: instance \"r5.2xlarge\": field \"local_disk_kind\": expected nvme, ssd or \
         hdd when local_disk_gb > 0"
    );
}
