//! Crash safety of `config.json` under real `Callback_upsert` / `Callback_toggle` writers
//! that are killed with SIGKILL at random points, 1,000 times.
//!
//! The test binary re-runs itself as the writer (selected by an environment variable), so
//! each writer is the real module code in a separate process that is really killed. Two
//! writers run at once (different workers), so the kills also land while one of them waits
//! for the other's lock. After every kill the file must parse, its `callbacks` section must
//! load, and every change a writer acknowledged (printed after the tool returned) must be
//! there: the definition with its id and script, and the writer's own deactivation of it.
//! A reader thread parses the file in a loop the whole time and never sees half a file.
//!
//! `CP_CRASH_KILLS` changes the number of kills (default 1,000).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use cp_base::{Module, Notifier, Project, ToolEnv, WorkerId};
use cp_mod_callback::{CONFIG_KEY, CallbackId, CallbackModule, CallbackSection};
use serde_json::json;

/// The project at `root` with a trust store under the target directory (never `~/.config`).
fn project_at(root: &Path) -> Project {
    let store = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trust/trust.json");
    Project::at(root).with_trust_store(cp_base::TrustStore::at(store))
}

const WRITER_ENV: &str = "CP_CALLBACK_CRASH_WRITER";

/// Writer mode: as worker `w{k}`, create callbacks `w{k}-{j}` and switch each off again,
/// forever, printing an acknowledgement after each tool call returned successfully.
#[test]
#[ignore = "helper process, started by name by the crash-safety tests"]
fn writer_child() {
    let Ok(spec) = std::env::var(WRITER_ENV) else {
        return;
    };
    let (root, k) = spec.split_once('|').unwrap();
    let project = project_at(Path::new(root));
    let worker = WorkerId::new(format!("w{k}")).unwrap();
    let mut module = CallbackModule::new(project.clone(), worker.clone());
    let env = ToolEnv::new(project, worker, Notifier::new());
    for j in 0.. {
        let name = format!("w{k}-{j}");
        let created = module
            .call_tool(
                "Callback_upsert",
                &json!({"action": "create", "name": name, "pattern": ["*.rs", "!target/"],
                        "script_content": "echo checked", "blocking": j % 2 == 0, "timeout": 30}),
                &env,
            )
            .finish();
        assert!(!created.is_error, "{}", created.text);
        let id = created
            .text
            .strip_prefix("Created ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap()
            .to_owned();
        println!("ack create {name} {id}");
        let toggled = module
            .call_tool("Callback_toggle", &json!({"id": id, "active": false}), &env)
            .finish();
        assert!(!toggled.is_error, "{}", toggled.text);
        println!("ack off {id}");
    }
}

fn spawn_writer(root: &Path, k: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_safety::writer_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WRITER_ENV, format!("{}|{k}", root.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// What the writers acknowledged: callback name → (id, worker), and ids switched off.
#[derive(Default)]
struct Acks {
    created: BTreeMap<String, (CallbackId, String)>,
    off: BTreeMap<CallbackId, String>,
}

impl Acks {
    fn record(&mut self, k: u64, stdout: &str) {
        let worker = format!("w{k}");
        for line in stdout.lines() {
            // The first line follows the harness's own "test writer_child ... ".
            let Some(at) = line.find("ack ") else {
                continue;
            };
            let words: Vec<&str> = line[at..].split_whitespace().collect();
            match words.as_slice() {
                ["ack", "create", name, id] => {
                    self.created
                        .insert((*name).to_owned(), (id.parse().unwrap(), worker.clone()));
                }
                ["ack", "off", id] => {
                    self.off.insert(id.parse().unwrap(), worker.clone());
                }
                _ => {}
            }
        }
    }
}

fn load(root: &Path, context: &str) -> CallbackSection {
    let path = root.join(".context-pilot/config.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return CallbackSection::default();
    };
    let doc: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{context}: config.json does not parse ({e}):\n{text}"));
    match doc.get(CONFIG_KEY) {
        None => CallbackSection::default(),
        Some(v) => serde_json::from_value(v.clone())
            .unwrap_or_else(|e| panic!("{context}: the callbacks section does not load: {e}")),
    }
}

fn check(root: &Path, acks: &Acks, context: &str) {
    let section = load(root, context);
    let ids: BTreeSet<CallbackId> = section.definitions.iter().map(|d| d.id).collect();
    assert_eq!(
        ids.len(),
        section.definitions.len(),
        "{context}: two callbacks share an id"
    );
    for (name, (id, _)) in &acks.created {
        let def = section
            .by_name(name)
            .unwrap_or_else(|| panic!("{context}: acknowledged callback {name} ({id}) is lost"));
        assert_eq!(def.id, *id, "{context}: {name} changed its id");
        assert!(
            root.join(format!(".context-pilot/scripts/{name}.sh"))
                .exists(),
            "{context}: the script of {name} is missing"
        );
    }
    for (id, worker) in &acks.off {
        assert!(
            !section.is_active(worker, *id),
            "{context}: {worker} switched {id} off, but it is on again"
        );
    }
}

/// Acknowledged creates and toggles a run needs before it proves anything.
const MIN_CREATED: usize = 50;
const MIN_OFF: usize = 25;
/// Longer rounds allowed after the planned kills to reach those minimums on a slow machine.
const MAX_EXTRA_ROUNDS: usize = 300;

#[test]
fn killed_writers_never_corrupt_config_or_lose_acknowledged_changes() {
    let kills: u64 = std::env::var("CP_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();

    // A reader that never sees a torn file, however the writers die.
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let reader = {
        let (stop, reads, path) = (
            stop.clone(),
            reads.clone(),
            root.join(".context-pilot/config.json"),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                        "a reader saw a torn config.json:\n{text}"
                    );
                    reads.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };

    let mut acks = Acks::default();
    let mut k = 0;
    let mut killed = 0;
    let mut round = 0u64;
    // The planned kills, then (only if a slow machine acknowledged too few writes to prove
    // anything) longer rounds until it has: the proof needs acknowledged writes, not a given
    // speed. The extra rounds are bounded so a broken writer still fails the test.
    let enough = |acks: &Acks| acks.created.len() >= MIN_CREATED && acks.off.len() >= MIN_OFF;
    let mut extra_rounds = 0;
    while killed < kills || (!enough(&acks) && extra_rounds < MAX_EXTRA_ROUNDS) {
        let extra = killed >= kills;
        extra_rounds += usize::from(extra);
        let pair: Vec<(u64, Child)> = (0..if extra { 2 } else { 2.min(kills - killed) })
            .map(|_| {
                k += 1;
                (k, spawn_writer(&root, k))
            })
            .collect();
        // Kill points spread over start-up, the first writes and a stream of writes; every
        // tenth round runs longer, so writes get acknowledged even on a loaded machine.
        let delay = if extra {
            400
        } else if round % 10 == 9 {
            150
        } else {
            (round * 13) % 70
        };
        std::thread::sleep(Duration::from_millis(delay));
        for (k, mut child) in pair {
            child.kill().unwrap(); // SIGKILL
            let out = child.wait_with_output().unwrap();
            acks.record(k, &String::from_utf8_lossy(&out.stdout));
            killed += 1;
        }
        check(&root, &acks, &format!("after kill {killed}"));
        round += 1;
    }

    stop.store(true, Ordering::Relaxed);
    reader.join().expect("the reader saw a torn file");
    assert!(
        enough(&acks),
        "too few writes were acknowledged to prove anything: {} created, {} off",
        acks.created.len(),
        acks.off.len()
    );
    assert!(reads.load(Ordering::Relaxed) > 0);

    // The next writer works on what the killed ones left, and sweeps their temp files.
    let worker = WorkerId::new("final").unwrap();
    let project = project_at(&root);
    let mut module = CallbackModule::new(project.clone(), worker.clone());
    let env = ToolEnv::new(project, worker, Notifier::new());
    let created = module
        .call_tool(
            "Callback_upsert",
            &json!({"action": "create", "name": "after-the-storm", "pattern": "*.md",
                    "script_content": "true"}),
            &env,
        )
        .finish();
    assert!(!created.is_error, "{}", created.text);
    check(&root, &acks, "after the final write");
    let leftovers: Vec<String> = [".context-pilot", ".context-pilot/scripts"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
    println!(
        "{killed} kills, {} creates and {} toggles acknowledged, {} clean reads",
        acks.created.len(),
        acks.off.len(),
        reads.load(Ordering::Relaxed)
    );
}
