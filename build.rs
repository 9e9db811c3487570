//! Records how this binary was built, for the results it writes (`result::ClientBuild`): an
//! unoptimised client spends several times the CPU per operation of the release build, and a
//! reader of a result must be able to tell.

fn main() {
    let opt_level = std::env::var("OPT_LEVEL").unwrap_or_default();
    // The profile's own name (`quick`, `release`, `debug` for dev) is the directory under the
    // target directory that OUT_DIR sits in: TARGET/PROFILE/build/cqlbench-HASH/out.
    let profile = std::env::var("OUT_DIR")
        .ok()
        .and_then(|out| {
            let p = std::path::PathBuf::from(out);
            p.ancestors()
                .nth(3)
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    println!("cargo:rustc-env=CQLBENCH_BUILD_OPT_LEVEL={opt_level}");
    println!("cargo:rustc-env=CQLBENCH_BUILD_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
}
