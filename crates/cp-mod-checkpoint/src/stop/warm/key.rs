//! The key a verdict is kept under: the tree it tested and exactly what ran on it.
//!
//! A verdict answers for one tree and one set of commands only. The key digests the tree's
//! fingerprint (HEAD and the state of every uncommitted, untracked and non-ignored file; see
//! [`super::tree`]) with each planned run's project, command, directory and environment, so
//! a changed file, a new commit, another command or another `PATH` gives another key and
//! never finds a verdict that was not made for it.

use std::ffi::OsString;
use std::path::Path;

use super::super::fingerprint::Fnv;
use super::super::testing::PlannedTestRun;

/// The key of `tree` tested by `runs`, each in the environment `env` gives for its directory.
pub(crate) fn run_key(
    tree: &str,
    runs: &[PlannedTestRun],
    env: impl Fn(&Path) -> Vec<(OsString, OsString)>,
) -> String {
    let mut hash = Fnv::new();
    let mut field = |bytes: &[u8]| {
        hash.write(&(bytes.len() as u64).to_le_bytes());
        hash.write(bytes);
    };
    field(tree.as_bytes());
    for run in runs {
        field(run.project.as_deref().unwrap_or_default().as_bytes());
        field(run.command.as_bytes());
        field(run.cwd.as_os_str().as_encoded_bytes());
        let mut vars = env(&run.cwd);
        vars.extend(run.env.iter().map(|(k, v)| (k.into(), v.into())));
        vars.sort();
        for (name, value) in vars {
            field(name.as_encoded_bytes());
            field(value.as_encoded_bytes());
        }
    }
    // Two halves hashed apart (the second over the first's digest too): 128 bits, so two
    // trees of one project never meet by chance.
    let first = hash.finish();
    hash.write(&first.to_le_bytes());
    format!("{first:016x}{:016x}", hash.finish())
}

/// The key of one command `run` on the commit whose tree (its git tree hash) is
/// `commit_tree`, with nothing uncommitted: what a session that begins there compares its
/// failures with. The tree hash names the bytes, so another commit with the same content
/// finds the same verdict, and no other content ever does.
pub(crate) fn base_key(
    commit_tree: &str,
    run: &PlannedTestRun,
    env: impl Fn(&Path) -> Vec<(OsString, OsString)>,
) -> String {
    run_key(
        &format!("commit-tree:{commit_tree}"),
        std::slice::from_ref(run),
        env,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str, cwd: &str) -> PlannedTestRun {
        PlannedTestRun {
            project: None,
            command: command.into(),
            cwd: cwd.into(),
            timeout_secs: 30,
            why: String::new(),
            env: Vec::new(),
        }
    }

    #[test]
    fn the_key_changes_with_the_tree_the_command_its_directory_and_its_environment() {
        let env = |_: &Path| vec![("PATH".into(), "/bin".into()), ("CI".into(), "true".into())];
        let key = run_key("tree1", &[run("make test", "/p")], env);
        assert_eq!(key, run_key("tree1", &[run("make test", "/p")], env));
        assert_eq!(key.len(), 32);
        assert_ne!(key, run_key("tree2", &[run("make test", "/p")], env));
        assert_ne!(key, run_key("tree1", &[run("make check", "/p")], env));
        assert_ne!(key, run_key("tree1", &[run("make test", "/q")], env));
        assert_ne!(
            key,
            run_key("tree1", &[run("make test", "/p")], |_: &Path| vec![(
                "PATH".into(),
                "/usr/bin".into()
            )])
        );
        let mut other = run("make test", "/p");
        other.project = Some("web".into());
        assert_ne!(key, run_key("tree1", &[other], env));
        // The limit is not part of what was tested.
        let mut longer = run("make test", "/p");
        longer.timeout_secs = 600;
        assert_eq!(key, run_key("tree1", &[longer], env));
        // Fields cannot run into each other.
        assert_ne!(
            run_key("tree1", &[run("ab", "/c")], env),
            run_key("tree1", &[run("a", "b/c")], env)
        );
    }
}
