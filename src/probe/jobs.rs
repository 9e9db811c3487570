//! fio job files for each profile. Pure: rendering depends only on the profile and
//! [`JobParams`], so the files are golden-tested and the same file can be run by hand.
//!
//! Job files name their files relatively (`data.0`, …); fio runs with the scratch directory as
//! its working directory, so a job file does not depend on where it is run. The read profiles
//! share `data.0`, laid out once; each writing profile has its own file, removed after it ran.

use crate::spec::probe::Profile;

/// The data file the read profiles share.
pub const DATA_FILE: &str = "data.0";

/// Size of the commit-log file: one Cassandra commit-log segment (32 MiB), rewritten in place.
pub const COMMITLOG_FILE_MIB: u64 = 32;

/// Readers of the mmap profile, each reading its own part of the data file.
const MMAP_READERS: u64 = 4;

/// Parameters that vary between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobParams {
    pub runtime_s: u64,
    pub ramp_s: u64,
    pub file_size_mib: u64,
    /// Open files with O_DIRECT (bypassing the page cache). False only when the filesystem
    /// refuses O_DIRECT.
    pub direct: bool,
}

/// Static facts about a profile.
pub struct ProfileInfo {
    /// One-line description, also written at the top of the job file.
    pub description: &'static str,
    /// The job whose latency percentiles are the profile's (the queries, not compaction).
    pub latency_job: &'static str,
    /// Files the profile writes and that are removed after it ran.
    pub written_files: &'static [&'static str],
}

pub fn info(profile: Profile) -> ProfileInfo {
    match profile {
        Profile::Lcs => ProfileInfo {
            description: "leveled compaction: 4 KiB random reads (queries, 16 in flight) while compaction reads and writes 64 KiB blocks sequentially, throttled to 32+32 MiB/s",
            latency_job: "reads",
            written_files: &["compaction.0"],
        },
        Profile::Stcs => ProfileInfo {
            description: "size-tiered compaction: 4 KiB random reads (queries, 16 in flight) while flushes and compactions write 1 MiB blocks sequentially in unthrottled 128 MiB bursts every 0.5 s",
            latency_job: "reads",
            written_files: &["flush.0"],
        },
        Profile::Commitlog => ProfileInfo {
            description: "commit log: 32 KiB sequential writes, one at a time, fdatasync every 8 writes, in a 32 MiB segment",
            latency_job: "commitlog",
            written_files: &["commitlog.0"],
        },
        Profile::SeqWrite64k => ProfileInfo {
            description: "file test: 64 KiB sequential writes, 16 in flight",
            latency_job: "seq_write_64k",
            written_files: &["seqwrite.0"],
        },
        Profile::RandRead4k => ProfileInfo {
            description: "file test: 4 KiB random reads, 16 in flight",
            latency_job: "rand_read_4k",
            written_files: &[],
        },
        Profile::MmapRandRead => ProfileInfo {
            description: "file test: 4 KiB random reads through mmap (MADV_RANDOM, page cache dropped at start), 4 readers, one pass over the file so no read is served twice",
            latency_job: "mmap_rand_read",
            written_files: &[],
        },
    }
}

/// Bytes of disk the profiles need at their peak: the shared data file plus the largest file
/// any one profile writes (each is removed before the next profile starts).
pub fn required_bytes(profiles: &[Profile], file_size_mib: u64) -> u64 {
    let mib = 1024 * 1024;
    let reads_data = profiles.iter().any(|p| {
        matches!(
            p,
            Profile::Lcs | Profile::Stcs | Profile::RandRead4k | Profile::MmapRandRead
        )
    });
    let largest_written = profiles
        .iter()
        .map(|p| match p {
            Profile::Commitlog => COMMITLOG_FILE_MIB,
            Profile::RandRead4k | Profile::MmapRandRead => 0,
            _ => file_size_mib,
        })
        .max()
        .unwrap_or(0);
    let data = if reads_data { file_size_mib } else { 0 };
    (data + largest_written) * mib
}

/// Renders the fio job file of `profile`.
pub fn render(profile: Profile, p: &JobParams) -> String {
    let mut out = String::new();
    out.push_str(&format!("; cqlbench probe profile: {profile}\n"));
    out.push_str(&format!("; {}\n", info(profile).description));
    out.push_str(&format!(
        "; run by hand: cd <scratch dir> && fio --output-format=json {profile}.fio\n"
    ));
    out.push_str("[global]\n");
    out.push_str("thread=1\n");
    if profile == Profile::MmapRandRead {
        // One pass over the file, not time-based: fio's random map never repeats a block
        // within a pass, so after the cache is dropped every read is a page fault that goes to
        // the disk. `runtime` only caps the pass.
        out.push_str(&format!("runtime={}\n", p.runtime_s));
    } else {
        out.push_str("time_based=1\n");
        out.push_str(&format!("runtime={}\n", p.runtime_s));
        out.push_str(&format!("ramp_time={}\n", p.ramp_s));
        out.push_str(&format!("size={}m\n", p.file_size_mib));
    }
    out.push_str("group_reporting=1\n");
    out.push_str("percentile_list=50:99:99.9\n");
    let direct = if p.direct { "direct=1\n" } else { "direct=0\n" };
    match profile {
        Profile::Lcs | Profile::Stcs => {
            out.push_str("ioengine=libaio\n");
            out.push_str(direct);
            out.push_str(&section(
                "reads",
                &["rw=randread", "bs=4k", "iodepth=16", "filename=data.0"],
            ));
            if profile == Profile::Lcs {
                out.push_str(&section(
                    "compaction",
                    &[
                        "new_group",
                        "rw=rw",
                        "rwmixread=50",
                        "bs=64k",
                        "iodepth=4",
                        "rate=32m,32m",
                        "filename=compaction.0",
                    ],
                ));
            } else {
                out.push_str(&section(
                    "flush",
                    &[
                        "new_group",
                        "rw=write",
                        "bs=1m",
                        "iodepth=4",
                        "thinktime=500000",
                        "thinktime_blocks=128",
                        "filename=flush.0",
                    ],
                ));
            }
        }
        Profile::Commitlog => {
            out.push_str("ioengine=psync\n");
            out.push_str(direct);
            out.push_str(&section(
                "commitlog",
                &[
                    "rw=write",
                    "bs=32k",
                    "fdatasync=8",
                    &format!("size={COMMITLOG_FILE_MIB}m"),
                    "filename=commitlog.0",
                ],
            ));
        }
        Profile::SeqWrite64k => {
            out.push_str("ioengine=libaio\n");
            out.push_str(direct);
            out.push_str(&section(
                "seq_write_64k",
                &["rw=write", "bs=64k", "iodepth=16", "filename=seqwrite.0"],
            ));
        }
        Profile::RandRead4k => {
            out.push_str("ioengine=libaio\n");
            out.push_str(direct);
            out.push_str(&section(
                "rand_read_4k",
                &["rw=randread", "bs=4k", "iodepth=16", "filename=data.0"],
            ));
        }
        Profile::MmapRandRead => {
            // A mapping always goes through the page cache: no O_DIRECT here. fio drops the
            // file's cached pages before starting (invalidate=1) and fadvise_hint=random makes
            // the mapping MADV_RANDOM (no read-ahead). Each of the 4 readers reads its own
            // quarter of the file once, so no reader finds a page another one faulted in.
            let quarter_kib = p.file_size_mib * 1024 / MMAP_READERS;
            out.push_str("ioengine=mmap\n");
            out.push_str("invalidate=1\n");
            out.push_str(&section(
                "mmap_rand_read",
                &[
                    "rw=randread",
                    "bs=4k",
                    &format!("numjobs={MMAP_READERS}"),
                    &format!("filesize={}m", p.file_size_mib),
                    &format!("size={quarter_kib}k"),
                    &format!("offset_increment={quarter_kib}k"),
                    "fadvise_hint=random",
                    "filename=data.0",
                ],
            ));
        }
    }
    out
}

fn section(name: &str, lines: &[&str]) -> String {
    let mut s = format!("\n[{name}]\n");
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: JobParams = JobParams {
        runtime_s: 4,
        ramp_s: 1,
        file_size_mib: 256,
        direct: true,
    };

    /// Compares each rendered job file with `testdata/jobs/<profile>.fio` (`UPDATE_GOLDEN=1`
    /// rewrites them after a deliberate change).
    #[test]
    fn job_files_match_golden_files() {
        for profile in Profile::ALL {
            let rendered = render(profile, &PARAMS);
            crate::testutil::assert_golden(
                &format!("src/probe/testdata/jobs/{profile}.fio"),
                &rendered,
            );
        }
    }

    #[test]
    fn buffered_fallback_changes_only_the_direct_flag() {
        let buffered = JobParams {
            direct: false,
            ..PARAMS
        };
        let a = render(Profile::RandRead4k, &PARAMS);
        let b = render(Profile::RandRead4k, &buffered);
        assert_eq!(a.replace("direct=1", "direct=0"), b);
        // mmap never asks for O_DIRECT, whatever the filesystem supports.
        assert!(!render(Profile::MmapRandRead, &PARAMS).contains("direct="));
    }

    #[test]
    fn every_job_named_for_latency_exists_in_the_file() {
        for profile in Profile::ALL {
            let text = render(profile, &PARAMS);
            let job = info(profile).latency_job;
            assert!(
                text.contains(&format!("\n[{job}]\n")),
                "{profile}: no [{job}]"
            );
            for f in info(profile).written_files {
                assert!(text.contains(&format!("filename={f}\n")), "{profile}: {f}");
            }
        }
    }

    #[test]
    fn required_space_is_data_file_plus_largest_written_file() {
        let mib = 1024 * 1024;
        assert_eq!(required_bytes(&Profile::ALL, 256), 512 * mib);
        assert_eq!(required_bytes(&[Profile::RandRead4k], 256), 256 * mib);
        assert_eq!(required_bytes(&[Profile::Commitlog], 256), 32 * mib);
        assert_eq!(required_bytes(&[], 256), 0);
    }
}
