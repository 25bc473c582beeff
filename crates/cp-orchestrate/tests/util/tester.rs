//! A [`TreeTester`] for the merge queue's tests: runs a real shell command in the tree it is
//! given (the front-end's tester runs the stop gate's commands the same way), and can hold
//! its first tests until several run at once, so a test sees candidates tested ahead of
//! their turn for certain, not by timing.

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use cp_orchestrate::{CommandRun, HostRun, TreeTest, TreeTester, TreeUnderTest};

/// Runs `sh -c command` in each tree; exit 0 passes.
pub struct ShellTester {
    pub command: String,
    /// The first this-many tests wait (at most a minute) until all of them run at once.
    pub meet: usize,
    arrived: Mutex<usize>,
    all_here: Condvar,
    /// Whether the first `meet` tests did run at once.
    pub met: Mutex<Option<bool>>,
    /// The trees tested, in order.
    pub trees: Mutex<Vec<PathBuf>>,
    /// Reports each test as run on a host `elsewhere`.
    pub on_a_host: bool,
    /// The tree that host says it checked out (`None`: the one it was given, as an honest
    /// host would).
    pub claimed: Option<String>,
}

impl ShellTester {
    pub fn new(command: &str) -> Self {
        Self {
            command: command.to_owned(),
            meet: 0,
            arrived: Mutex::new(0),
            all_here: Condvar::new(),
            met: Mutex::new(None),
            trees: Mutex::new(Vec::new()),
            on_a_host: false,
            claimed: None,
        }
    }

    /// Each test says it ran on host `elsewhere`, on `tree` (`None`: the one it was given).
    pub fn on_a_host(mut self, tree: Option<&str>) -> Self {
        self.on_a_host = true;
        self.claimed = tree.map(str::to_owned);
        self
    }

    /// The first `n` tests run at once.
    pub fn meeting(mut self, n: usize) -> Self {
        self.meet = n;
        self
    }

    fn wait_for_the_others(&self) {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        if *arrived > self.meet {
            return;
        }
        self.all_here.notify_all();
        let (_arrived, waited) = self
            .all_here
            .wait_timeout_while(arrived, Duration::from_secs(60), |arrived| {
                *arrived < self.meet
            })
            .unwrap();
        if waited.timed_out() {
            *self.met.lock().unwrap() = Some(false);
            return;
        }
        self.met.lock().unwrap().get_or_insert(true);
    }
}

impl TreeTester for ShellTester {
    fn test_tree(&self, tree: &TreeUnderTest<'_>) -> TreeTest {
        self.trees.lock().unwrap().push(tree.root.to_path_buf());
        self.wait_for_the_others();
        let started = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(tree.root)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let code = out.status.code();
        TreeTest {
            runs: vec![CommandRun {
                command: self.command.clone(),
                exit: code.map_or_else(|| "killed".into(), |c| format!("exit {c}")),
                exit_code: code,
                passed: out.status.success(),
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap(),
                tail: text.lines().map(str::to_owned).collect(),
                ..CommandRun::default()
            }],
            note: None,
            host: self.on_a_host.then(|| HostRun {
                host: "elsewhere".into(),
                tree: self.claimed.clone().unwrap_or_else(|| {
                    let out = Command::new("git")
                        .args(["rev-parse", &format!("{}^{{tree}}", tree.commit)])
                        .current_dir(tree.root)
                        .output()
                        .unwrap();
                    String::from_utf8_lossy(&out.stdout).trim().to_owned()
                }),
                transfer_ms: 1,
            }),
        }
    }
}
