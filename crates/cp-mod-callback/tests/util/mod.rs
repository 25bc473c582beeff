//! Shared helpers: a temp project with the callback module behind a real registry, a real
//! console server, and batches built from files really written to disk.

#![allow(dead_code, reason = "each test file uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cp_base::{
    BatchChanges, CallChanges, CallNote, ChangeKind, FileChange, Notice, Notifier, Project,
    Registry, ToolCall, ToolEnv, ToolResult, WorkerId,
};
use cp_mod_callback::CallbackModule;
use cp_mod_console::{ClientConfig, ConsoleClient};
use serde_json::{Value, json};

/// The console server binary, built once per test process.
pub fn server_exe() -> PathBuf {
    cp_mod_console::server_exe_for_tests().unwrap()
}

/// The project at `root` with a trust store under the target directory, never the user's
/// `~/.config`: tests that create callbacks through the tools keep it trusted there.
pub fn project(root: &Path) -> Project {
    let store = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trust/trust.json");
    Project::at(root).with_trust_store(cp_base::TrustStore::at(store))
}

/// Trusts what `project` allows now, as `context-pilot trust` does.
pub fn trust(project: &Project) {
    project.grant_trust().unwrap();
}

pub fn console_config(root: &Path) -> ClientConfig {
    let mut cfg = ClientConfig::new(root);
    cfg.server_exe = Some(server_exe());
    cfg.server_env
        .insert("CP_CONSOLE_KILL_GRACE_MS".into(), "300".into());
    cfg.server_env
        .insert("CP_CONSOLE_IDLE_TIMEOUT_MS".into(), "30000".into());
    cfg
}

/// A project directory with one registry per worker sharing it.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub project: Project,
    pub registry: Registry,
    pub env: ToolEnv,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = project(&root);
        let mut f = Self {
            dir,
            root,
            project: project.clone(),
            registry: Registry::new(),
            env: ToolEnv::new(project, WorkerId::default(), Notifier::new()),
        };
        f.registry = f.registry_for("main");
        f
    }

    /// A registry of a second process/agent acting as `worker` on the same project.
    pub fn registry_for(&self, worker: &str) -> Registry {
        let mut r = Registry::new();
        let module = CallbackModule::with_console(
            project(&self.root),
            WorkerId::new(worker).unwrap(),
            console_config(&self.root),
        );
        r.register(Box::new(module));
        r
    }

    pub fn env_for(&self, worker: &str) -> ToolEnv {
        ToolEnv::new(
            project(&self.root),
            WorkerId::new(worker).unwrap(),
            Notifier::new(),
        )
    }

    pub fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .call(&ToolCall::new("t", tool, args), &self.env)
    }

    /// Creates a callback and returns its id; panics with the tool's text on failure.
    #[allow(
        clippy::needless_pass_by_value,
        reason = "call sites read better with json! literals"
    )]
    pub fn create(&self, name: &str, pattern: Value, script: &str, extra: Value) -> String {
        let mut args = json!({
            "action": "create", "name": name, "pattern": pattern, "script_content": script,
        });
        if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
            a.extend(e.clone());
        }
        let r = self.call("Callback_upsert", args);
        assert!(!r.is_error, "{}", r.text);
        r.text.split_whitespace().nth(1).unwrap().to_owned()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_default()
    }

    pub fn config(&self) -> Value {
        let text = std::fs::read_to_string(self.root.join(".context-pilot/config.json"))
            .unwrap_or_else(|_| "{}".into());
        serde_json::from_str(&text).unwrap()
    }

    /// Runs the batch hook: notes given at once, then the hold's notes (it waits).
    pub fn fire(&self, batch: &BatchChanges) -> (Vec<CallNote>, Vec<CallNote>) {
        fire_as(&self.registry, &self.env, batch)
    }

    /// Waits (up to a safety limit) for a notification from background work.
    pub fn next_notification(&self) -> cp_base::Notification {
        let mut skipped = Vec::new();
        cp_e2e::eventually_some("a notification", Duration::from_secs(60), || {
            for notice in self.env.notifier.drain() {
                match notice {
                    Notice::Notify(n) => {
                        self.env.notifier.restore(std::mem::take(&mut skipped));
                        return Some(n);
                    }
                    other => skipped.push(other),
                }
            }
            None
        })
    }

    pub fn opened_panels(&self) -> Vec<String> {
        self.env
            .notifier
            .drain()
            .into_iter()
            .filter_map(|n| match n {
                Notice::OpenPanel(id) => Some(id),
                _ => None,
            })
            .collect()
    }

    pub fn panel_ids(&self) -> Vec<String> {
        // Fresh from the module: a run's panel shows once its runner marks it failed.
        self.registry
            .with_module("callback", |m| m.panels())
            .unwrap()
            .iter()
            .map(|p| p.id())
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Ok(c) = ConsoleClient::new(console_config(&self.root)) {
            let _ = c.shutdown_server();
        }
    }
}

/// Runs the batch hook of `registry`'s module as `env`'s worker.
pub fn fire_as(
    registry: &Registry,
    env: &ToolEnv,
    batch: &BatchChanges,
) -> (Vec<CallNote>, Vec<CallNote>) {
    let response = registry
        .with_module("callback", |m| m.on_batch(batch, env))
        .unwrap();
    let held = response.hold.map(|h| h()).unwrap_or_default();
    (response.notes, held)
}

/// A batch where each call edits the given files (labels `File_edit <first path>`).
pub fn batch(calls: &[&[(&str, ChangeKind)]]) -> BatchChanges {
    BatchChanges {
        calls: calls
            .iter()
            .enumerate()
            .map(|(i, changes)| CallChanges {
                call_index: i,
                tool: "File_edit".into(),
                label: format!("File_edit {}", changes.first().map_or("", |c| c.0)),
                changes: changes
                    .iter()
                    .map(|(p, k)| FileChange::new(*p, *k))
                    .collect(),
            })
            .collect(),
    }
}

pub fn edit(paths: &[&str]) -> BatchChanges {
    let calls: Vec<[(&str, ChangeKind); 1]> =
        paths.iter().map(|p| [(*p, ChangeKind::Modified)]).collect();
    let refs: Vec<&[(&str, ChangeKind)]> = calls
        .iter()
        .map(<[(&str, ChangeKind); 1]>::as_slice)
        .collect();
    batch(&refs)
}

/// The run id (UUID) in a note like "... (run <uuid>...".
pub fn run_id(note: &str) -> String {
    let start = note.find("(run ").expect("note has a run id") + 5;
    note[start..start + 36].to_owned()
}

/// Pids of every process in process group `pgid`, from `ps`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let out = Command::new("ps")
        .args(["-eo", "pid=,pgid=,stat="])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let member: u32 = it.next()?.parse().ok()?;
            let pg: u32 = it.next()?.parse().ok()?;
            let stat = it.next().unwrap_or("");
            (pg == pgid && !stat.starts_with('Z')).then_some(member)
        })
        .collect()
}
