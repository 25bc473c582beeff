//! Load: three workers on one project for a while — two TUIs (the real binary in PTYs,
//! driven through the command palette) and one MCP server (`context-pilot mcp`, JSON-RPC
//! over stdio) — each creating callbacks, editing files with `File_write` (which fires its
//! callback) and toggling the callback off again, with its own `--worker` id.
//!
//! Afterwards: every acknowledged change is in config.json and on disk (no lost update),
//! every process still answers (no deadlock), and once they quit and the console server is
//! stopped, no process is left in the project (no orphan).
//!
//! `CP_LOAD_SECS` sets how long the workers run (default 10 s here; the 60 s figures in
//! BENCHMARKS.md come from `CP_LOAD_SECS=60 cargo test -p context-pilot --test load -- --nocapture`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

mod util;

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use cp_e2e::{TuiSession, eventually, eventually_with, git_repo};
use cp_mod_callback::{CONFIG_KEY, CallbackId, CallbackSection};
use serde_json::{Value, json};
use util::{canonical, context_pilot, stop_console_server};

const WAIT: Duration = Duration::from_secs(60);

/// What one worker got acknowledged.
#[derive(Debug, Default)]
struct Acks {
    worker: String,
    /// Callback name → its id.
    created: BTreeMap<String, CallbackId>,
    /// Ids this worker switched off.
    off: Vec<CallbackId>,
    /// Files written → their content.
    written: BTreeMap<String, String>,
    /// Tool calls that came back (ok or not), for the figures.
    calls: usize,
}

/// One worker's operations, whatever the front-end.
trait Front {
    /// Runs a tool and returns its result text once the front-end acknowledged it.
    fn call(&mut self, tool: &str, args: &Value, done: &str) -> String;
}

/// A TUI driven through its palette; a call is acknowledged when `done` shows on screen.
struct TuiFront(TuiSession);

impl Front for TuiFront {
    fn call(&mut self, tool: &str, args: &Value, done: &str) -> String {
        self.0.send(b"\x10"); // Ctrl-P
        self.0.wait_for("Command palette", WAIT).unwrap();
        // Keys are read in order: the Enter after the text runs exactly this command.
        self.0.send(format!("{tool} {args}\r").as_bytes());
        self.0.wait_for(done, WAIT).unwrap()
    }
}

/// `context-pilot mcp` over stdio.
struct McpFront {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpFront {
    fn start(root: &Path, worker: &str) -> Self {
        let mut child = context_pilot(root)
            .args(["mcp", "--worker", worker])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut me = Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = me.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "load-test", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "context-pilot");
        writeln!(
            me.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        me
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the MCP server closed stdout"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            // Skip notifications and anything that is not the answer to this request.
            if reply["id"] == id {
                return reply;
            }
        }
    }
}

impl Front for McpFront {
    fn call(&mut self, tool: &str, args: &Value, done: &str) -> String {
        let reply = self.request("tools/call", &json!({"name": tool, "arguments": args}));
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_ne!(reply["result"]["isError"], true, "{tool} failed: {text}");
        assert!(text.contains(done), "{tool}: {done:?} not in {text}");
        text
    }
}

/// Creates, writes, toggles until `deadline`; returns what was acknowledged.
fn work(front: &mut dyn Front, worker: &str, deadline: Instant) -> Acks {
    let mut acks = Acks {
        worker: worker.to_owned(),
        ..Acks::default()
    };
    let mut j = 0;
    while Instant::now() < deadline {
        let name = format!("{worker}-{j}");
        let blocking = j % 2 == 0;
        let created = front.call(
            "Callback_upsert",
            &json!({"action": "create", "name": name, "pattern": format!("{worker}/*.txt"),
                    "script_content": "echo fired-$CP_CALLBACK_NAME", "blocking": blocking,
                    "timeout": 30}),
            &format!("'{name}': fires after"),
        );
        // A TUI's "result" is its whole screen: take the line about this callback.
        let id: CallbackId = created
            .lines()
            .find(|l| l.contains(&format!("'{name}': fires after")))
            .and_then(|l| {
                let rest = &l[l.find("Created CB")? + "Created ".len()..];
                rest.split_whitespace().next()?.parse().ok()
            })
            .unwrap_or_else(|| panic!("no id in {created}"));
        acks.created.insert(name.clone(), id);
        let path = format!("{worker}/f{j}.txt");
        let content = format!("written by {worker}, round {j}");
        front.call(
            "File_write",
            &json!({"file_path": path, "content": content}),
            &format!("Created {path}"),
        );
        acks.written.insert(path, content);
        front.call(
            "Callback_toggle",
            &json!({"id": id.to_string(), "active": false}),
            &format!("'{name}' is now"),
        );
        acks.off.push(id);
        acks.calls += 3;
        j += 1;
    }
    acks
}

/// Pids of processes (other than this one) whose cwd or command line is inside `root`.
fn processes_in(root: &Path) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        if cwd.starts_with(root) || cmdline.contains(&root.display().to_string()) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Every acknowledged change is in config.json and on disk; returns the callbacks created.
fn check_no_lost_update(root: &Path, all_acks: &[&Acks], secs: u64) -> usize {
    // No lost update: every acknowledged change is in config.json and on disk.
    let text = std::fs::read_to_string(root.join(".context-pilot/config.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let section: CallbackSection = serde_json::from_value(doc[CONFIG_KEY].clone()).unwrap();
    for acks in all_acks {
        assert!(
            !acks.created.is_empty(),
            "{} got nothing done in {secs} s",
            acks.worker
        );
        for (name, id) in &acks.created {
            let def = section
                .by_name(name)
                .unwrap_or_else(|| panic!("{name} ({id}) was acknowledged but is lost"));
            assert_eq!(def.id, *id, "{name} changed its id");
        }
        for id in &acks.off {
            assert!(
                !section.is_active(&acks.worker, *id),
                "{} switched {id} off, but it is on",
                acks.worker
            );
        }
        for (path, content) in &acks.written {
            assert_eq!(
                std::fs::read_to_string(root.join(path)).unwrap(),
                *content,
                "{path}"
            );
        }
    }
    let created: usize = all_acks.iter().map(|a| a.created.len()).sum();
    assert_eq!(
        section.definitions.len(),
        created,
        "no extra or lost callbacks"
    );
    let mut ids: Vec<u64> = section.definitions.iter().map(|d| d.id.0).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), created, "ids are unique");

    created
}

/// Quits every front-end, stops the console server, and checks nothing stays behind.
fn quit_all_and_check_orphans(root: &Path, tuis: Vec<TuiFront>, mut mcp: McpFront) {
    // Quit everything, stop the console server: nothing may stay behind in the project.
    for mut tui in tuis {
        assert_eq!(tui.0.quit(WAIT).unwrap(), 0);
    }
    drop(mcp.stdin);
    eventually("the MCP server to exit", WAIT, || {
        mcp.child.try_wait().unwrap().is_some()
    });
    // The console server outlives its clients by design, and the scan must see it.
    assert!(
        processes_in(root)
            .iter()
            .any(|(_, cmd)| cmd.contains("console-server")),
        "the process scan does not see the console server: {:?}",
        processes_in(root)
    );
    stop_console_server(root);
    eventually_with(
        "every process of the project to end",
        Duration::from_secs(10),
        || processes_in(root).is_empty(),
        || format!("orphaned processes: {:?}", processes_in(root)),
    );
}

fn start_tui(root: &Path, worker: &str) -> TuiFront {
    let tui = TuiSession::start_sized(root, &["--worker", worker], &[], 200, 50).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    TuiFront(tui)
}

#[test]
fn two_tuis_and_an_mcp_server_lose_nothing_and_leave_nothing() {
    let secs: u64 = std::env::var("CP_LOAD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let repo = git_repo();
    let root: PathBuf = canonical(repo.path());
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);

    let workers = std::thread::scope(|scope| {
        let tuis: Vec<_> = ["tui-a", "tui-b"]
            .into_iter()
            .map(|worker| {
                let root = &root;
                scope.spawn(move || {
                    let mut front = start_tui(root, worker);
                    let acks = work(&mut front, worker, deadline);
                    (acks, front)
                })
            })
            .collect();
        let mcp = scope.spawn(|| {
            let mut front = McpFront::start(&root, "mcp");
            let acks = work(&mut front, "mcp", deadline);
            (acks, front)
        });
        let tuis: Vec<(Acks, TuiFront)> = tuis.into_iter().map(|h| h.join().unwrap()).collect();
        (tuis, mcp.join().unwrap())
    });
    let elapsed = started.elapsed();
    let (tuis, (mcp_acks, mut mcp)) = workers;
    let (tui_acks, mut tuis): (Vec<Acks>, Vec<TuiFront>) = tuis.into_iter().unzip();

    let all_acks: Vec<&Acks> = tui_acks.iter().chain(std::iter::once(&mcp_acks)).collect();
    let created = check_no_lost_update(&root, &all_acks, secs);
    let total_calls: usize = all_acks.iter().map(|a| a.calls).sum();

    // No deadlock: every process still answers.
    for (i, tui) in tuis.iter_mut().enumerate() {
        let path = format!("alive-{i}.txt");
        tui.call(
            "File_write",
            &json!({"file_path": path, "content": "still here"}),
            &format!("Created {path}"),
        );
    }
    let listed = mcp.request("tools/list", &json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() >= 16),
        "{listed}"
    );

    quit_all_and_check_orphans(&root, tuis, mcp);

    println!(
        "load: {secs} s configured, {:.1} s run; {total_calls} tool calls acknowledged \
         ({:.1}/s); {created} callbacks created and toggled off; per worker: {}",
        elapsed.as_secs_f64(),
        f64::from(u32::try_from(total_calls).unwrap()) / elapsed.as_secs_f64(),
        all_acks
            .iter()
            .map(|a| format!("{} {}", a.worker, a.calls))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
