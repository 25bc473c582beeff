//! Context Pilot beyond one machine: the places that run a merge test, and both sides of
//! `context-pilot test-tree --json`.
//!
//! - [`Place`]: the seam. A place takes commits into its own clone of the project and starts
//!   `context-pilot` jobs whose events come back one JSON line each; [`SshPlace`] (a host of
//!   the `hosts` configuration) and [`LocalPlace`] implement it, and an engine that schedules
//!   work (Kubernetes Jobs) would be one more.
//! - [`HostConfig`] and [`load_hosts`]: the `hosts` section of `config.json`, read strictly.
//! - [`HostTester`]: the merge queue's [`TreeTester`](cp_orchestrate::TreeTester) that sends
//!   each tree to a host with a free slot; the proof names the host and the tree it checked
//!   out, and the queue believes it only for the candidate's own tree.
//! - [`serve_test_tree`]: the host's side: checks out the commit in a worktree of its clone,
//!   refuses a project its user does not trust, tests it, prints the events ([`TestEvent`]).
//! - [`receive_pack`]: the host's side of the push that brings the commits;
//!   [`upload_pack`]: of the fetch that takes a phase's commits back.
//! - [`run_phase_on`]: the run's side of a workflow phase on a place (`context-pilot phase
//!   --json`), which brings each commit the phase makes there back into its worktree;
//!   [`serve_phase`]: the host's side, which runs the phase with its own agent and
//!   credentials ([`PhaseBench`]) and prints the events ([`PhaseEvent`]).
//!
//! ```
//! let hosts: Vec<cp_remote::HostConfig> =
//!     serde_json::from_str(r#"[{"ssh": "build-1", "slots": 2}]"#).unwrap();
//! cp_remote::check_hosts(&hosts).unwrap();
//! assert_eq!(hosts[0].name(), "build-1");
//! let key = cp_remote::project_key(std::path::Path::new("/src/app"));
//! assert!(key.starts_with("app-"));
//! ```

mod clone;
mod config;
mod error;
mod machine;
mod phase;
mod place;
mod serve;
mod serve_phase;
mod tester;
mod wire;

pub use clone::{checked_key, clones_dir, prepare_clone, project_key};
pub use config::{HOSTS_CONFIG_KEY, HostConfig, check_hosts, load_hosts};
pub use error::RemoteError;
pub use machine::host_name;
pub use phase::{PhaseOutcome, phase_ref, run_phase_on};
pub use place::{Job, LocalPlace, Place, SSH_CONFIG_ENV, SSH_OPTIONS, SshPlace, clean_env};
pub use serve::{Bench, serve_test_tree, test_ref};
pub use serve_phase::{NewsSink, PhaseBench, serve_phase};
pub use tester::{HostTester, Placed, ssh_places};
pub use wire::{PhaseEnd, PhaseEvent, PhaseRequest, TestEvent, TestRequest};

/// The host's side of `git push host:<key>` (`git push --receive-pack='context-pilot
/// receive-pack'`): the project's clone is made when missing, then git's own
/// `receive-pack` takes the push there. Returns the clone's path for the caller to hand to
/// `git receive-pack`.
pub fn receive_pack(raw_key: &str) -> Result<std::path::PathBuf, RemoteError> {
    prepare_clone(&checked_key(raw_key)?)
}

/// The host's side of the fetch of a phase's commits (`git fetch
/// --upload-pack='context-pilot upload-pack'`): the clone's path, for the caller to hand to
/// `git upload-pack`. The clone must be there (the run sent the phase's start into it).
pub fn upload_pack(raw_key: &str) -> Result<std::path::PathBuf, RemoteError> {
    let key = checked_key(raw_key)?;
    let clone = clones_dir()?.join(&key);
    if clone.join(".git").is_dir() {
        Ok(clone)
    } else {
        Err(RemoteError::Serve(format!(
            "no clone of project {key} here"
        )))
    }
}

/// The error of `git receive-pack` that could not be started (`exec` failed with `e`).
pub fn receive_pack_failed(e: &std::io::Error) -> RemoteError {
    clone::no_git(e)
}
