//! Sending a repository to a host (issue 51): the time `Place::send` takes (git push over real
//! OpenSSH to a `cp_e2e::TestHost` on this machine, `context-pilot receive-pack` there) for a
//! repository of 10 MB and of 100 MB of incompressible files, into a clone that has none of
//! it, then for one small commit on top (what each merge test sends once the host has the
//! project). The host is a network namespace of this machine: the figures are git's and
//! ssh's own cost, without a real network's latency or bandwidth.

use std::path::Path;
use std::time::Instant;

use cp_remote::{Place, SshPlace};

use super::Options;
use super::stats::{Row, ms};

pub fn host_transfer(opts: &Options) -> Vec<Row> {
    if !cp_e2e::TestHost::can_start() {
        return Vec::new();
    }
    let runs = if opts.quick { 1 } else { 5 };
    let sizes: &[usize] = if opts.quick { &[1] } else { &[10, 100] };
    let host = cp_e2e::TestHost::start("bench");
    let ssh = tempfile::tempdir().unwrap();
    let config = cp_e2e::hosts::ssh_config(ssh.path(), &[&host]);
    let place = SshPlace::with_config("bench", "bench", config);
    let mut rows = Vec::new();
    for &mb in sizes {
        let repo = cp_e2e::git_repo();
        let root = repo.path().canonicalize().unwrap();
        let commit = fill(&root, mb);
        let mut first = Vec::new();
        let mut small = Vec::new();
        for run in 0..runs {
            let key = format!("bench-{mb}mb-{run}");
            let started = Instant::now();
            place
                .send(&root, &key, &commit, "refs/context-pilot/tests/bench")
                .unwrap();
            first.push(ms(started.elapsed()));
            std::fs::write(root.join("small.txt"), format!("run {run}\n")).unwrap();
            cp_e2e::git(&root, &["add", "small.txt"]);
            cp_e2e::git(&root, &["commit", "-qm", "small"]);
            let next = cp_e2e::git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
            let started = Instant::now();
            place
                .send(&root, &key, &next, "refs/context-pilot/tests/bench-next")
                .unwrap();
            small.push(ms(started.elapsed()));
        }
        rows.push(
            Row::new(
                format!("host transfer: a {mb} MB repository, first send"),
                "ms",
                first,
            )
            .note("git push over ssh to a host on this machine (network namespace)"),
        );
        rows.push(
            Row::new(
                format!("host transfer: one small commit on the {mb} MB repository"),
                "ms",
                small,
            )
            .note("what each merge test sends once the host has the project"),
        );
    }
    drop(host);
    rows
}

/// Commits `mb` MB of incompressible files (1 MB each) into the repository at `root`;
/// returns the commit.
fn fill(root: &Path, mb: usize) -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ mb as u64;
    for file in 0..mb {
        let mut bytes = Vec::with_capacity(1 << 20);
        while bytes.len() < 1 << 20 {
            // xorshift64: cheap bytes that neither git nor ssh can compress.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.extend_from_slice(&state.to_le_bytes());
        }
        std::fs::write(root.join(format!("blob-{file:03}.bin")), bytes).unwrap();
    }
    cp_e2e::git(root, &["add", "-A"]);
    cp_e2e::git(root, &["commit", "-qm", "data"]);
    cp_e2e::git(root, &["rev-parse", "HEAD"]).trim().to_owned()
}
