//! The file tools through real `context-pilot mcp` processes: a write that fails because the
//! file size limit is hit (standing in for a full disk), a server killed mid-write, and two
//! servers editing one file at once; and `context-pilot tool` typed in a shell.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use crate::util::{canonical, context_pilot, stop_console_server};
use cp_e2e::git_repo;
use serde_json::{Value, json};

/// One `context-pilot mcp` server, spoken to with JSON-RPC lines over stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(root: &Path) -> Self {
        Self::start_with(context_pilot(root))
    }

    fn start_with(mut cmd: Command) -> Self {
        let mut child = cmd
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        server.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "files-test", "version": "0"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request without waiting for its answer; returns its id.
    fn post(&mut self, method: &str, params: &Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.post(method, params);
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout before answering {method}");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    /// Calls a tool; returns whether it failed, and its text.
    fn tool(&mut self, name: &str, args: &Value) -> (bool, String) {
        let reply = self.request("tools/call", &json!({"name": name, "arguments": args}));
        let result = &reply["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (result["isError"].as_bool().unwrap_or(false), text)
    }

    fn stop(mut self) {
        drop(self.stdin);
        if cp_e2e::within(Duration::from_secs(60), || self.child.try_wait().unwrap()).is_none() {
            let _ = self.child.kill();
            self.child.wait().unwrap();
        }
    }
}

/// Names in `dir`, sorted, without the `.context-pilot` and `.git` directories.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".context-pilot" && n != ".git")
        .collect();
    names.sort();
    names
}

/// The server with its file size limit set to `bytes` (and `SIGXFSZ` ignored, so an
/// oversized write fails with `EFBIG` as a full disk fails with `ENOSPC`).
fn size_limited(root: &Path, bytes: u64) -> Command {
    let mut cmd = context_pilot(root);
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal) are made.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &raw const limit) != 0
                || libc::signal(libc::SIGXFSZ, libc::SIG_IGN) == libc::SIG_ERR
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

#[test]
fn a_write_that_runs_out_of_space_leaves_the_original_byte_identical() {
    let repo = git_repo();
    let root = canonical(repo.path());
    // Set up the project (its state files) before the limited server starts.
    Server::start(&root).stop();
    let original: Vec<u8> = (0..4000u32)
        .flat_map(|i| format!("line {i}\n").into_bytes())
        .collect();
    std::fs::write(root.join("notes.txt"), &original).unwrap();
    let big = "x".repeat(512 * 1024);
    let mut server = Server::start_with(size_limited(&root, 256 * 1024));
    let (err, text) = server.tool(
        "File_write",
        &json!({"file_path": "notes.txt", "content": big}),
    );
    let unchanged = || std::fs::read(root.join("notes.txt")).unwrap() == original;
    assert!(unchanged(), "the failed File_write changed notes.txt");
    assert!(err && text.contains("left unchanged"), "{text}");
    let (err, text) = server.tool(
        "File_edit",
        &json!({"file_path": "notes.txt", "old_string": "line 7\n", "new_string": big}),
    );
    assert!(unchanged(), "the failed File_edit changed notes.txt");
    assert!(err, "{text}");
    let (err, text) = server.tool(
        "File_write",
        &json!({"file_path": "new/deep/file.txt", "content": big}),
    );
    assert!(err && text.contains("nothing was created"), "{text}");
    server.stop();
    stop_console_server(&root);
    assert!(unchanged(), "notes.txt changed");
    assert_eq!(
        names(&root),
        ["notes.txt"],
        "a temp file or directory was left behind"
    );
}

/// A tiny tmpfs mounted for one test, unmounted (lazily) on drop.
struct TinyFs {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl TinyFs {
    /// The reason, where mounting is impossible (not root, no `CAP_SYS_ADMIN`).
    fn mount(size: &str) -> Result<Self, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = canonical(dir.path());
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Self { _dir: dir, path })
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

#[test]
fn a_write_on_a_full_disk_leaves_the_original_byte_identical() {
    let fs = match TinyFs::mount("2m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!(
                "SKIPPED: cannot mount a tiny tmpfs to fill up ({why}); the RLIMIT_FSIZE test \
                 a_write_that_runs_out_of_space_leaves_the_original_byte_identical covers the \
                 same failure path"
            );
            return;
        }
    };
    let root = fs.path.clone();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    Server::start(&root).stop();
    let original = "keep me\n".repeat(2000);
    std::fs::write(root.join("notes.txt"), &original).unwrap();
    let mut server = Server::start(&root);
    // Fill the disk: one filler file, written until the filesystem refuses.
    let mut filler = std::fs::File::create(root.join("filler")).unwrap();
    let block = vec![b'f'; 4096];
    while filler.write_all(&block).is_ok() {}
    drop(filler);
    let (err, text) = server.tool(
        "File_write",
        &json!({"file_path": "notes.txt", "content": "y".repeat(256 * 1024)}),
    );
    let after = std::fs::read_to_string(root.join("notes.txt")).unwrap();
    assert!(after == original, "the failed File_write changed notes.txt");
    assert!(err && text.contains("left unchanged"), "{text}");
    let (err, text) = server.tool(
        "File_write",
        &json!({"file_path": "fresh.txt", "content": "z".repeat(256 * 1024)}),
    );
    assert!(err && text.contains("nothing was created"), "{text}");
    server.stop();
    stop_console_server(&root);
    assert_eq!(
        names(&root),
        ["filler", "notes.txt"],
        "a temp file was left behind"
    );
}

#[test]
fn a_server_killed_mid_write_leaves_the_old_or_the_new_file() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let old = "old content\n".repeat(1000);
    let new = "new content\n".repeat(1_000_000); // 12 MB
    let target = root.join("big.txt");
    std::fs::write(&target, &old).unwrap();
    let mut server = Server::start(&root);
    server.post(
        "tools/call",
        &json!({"name": "File_write", "arguments": {"file_path": "big.txt", "content": new}}),
    );
    // Kill the server as soon as the write has visibly begun: a temp file appeared beside
    // the target, or the target itself changed.
    // No pause between looks: the write is caught while it is under way.
    let began = cp_e2e::within_every(Duration::from_secs(60), Duration::ZERO, || {
        let began = names(&root).len() > 1
            || std::fs::metadata(&target).map_or(true, |m| m.len() != old.len() as u64);
        began.then_some(())
    });
    assert!(began.is_some(), "the write never began");
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    stop_console_server(&root);
    eprintln!("after the kill: {:?}", names(&root));
    let after = std::fs::read_to_string(&target).unwrap();
    assert!(
        after == old || after == new,
        "big.txt is neither the old nor the new content: {} bytes",
        after.len()
    );
    // The killed writer's temp file is swept by the next write in that directory.
    let mut server = Server::start(&root);
    let (err, text) = server.tool(
        "File_write",
        &json!({"file_path": "small.txt", "content": "x"}),
    );
    assert!(!err, "{text}");
    server.stop();
    stop_console_server(&root);
    assert_eq!(names(&root), ["big.txt", "small.txt"]);
}

#[test]
fn two_servers_editing_one_file_lose_no_edit() {
    const EDITS: usize = 60;
    let repo = git_repo();
    let root = canonical(repo.path());
    let slots: Vec<String> = (0..2 * EDITS)
        .map(|i| format!("slot {i}: todo\n"))
        .collect();
    std::fs::write(root.join("shared.txt"), slots.concat()).unwrap();
    // Start both servers before either edits, so their edits overlap.
    let servers: Vec<Server> = (0..2).map(|_| Server::start(&root)).collect();
    let workers: Vec<_> = servers
        .into_iter()
        .enumerate()
        .map(|(which, mut server)| {
            std::thread::spawn(move || {
                let mut errors = Vec::new();
                for i in 0..EDITS {
                    let slot = 2 * i + which;
                    let (err, text) = server.tool(
                        "File_edit",
                        &json!({"file_path": "shared.txt",
                                "old_string": format!("slot {slot}: todo\n"),
                                "new_string": format!("slot {slot}: done by {which}\n")}),
                    );
                    if err {
                        errors.push(text);
                    }
                }
                server.stop();
                errors
            })
        })
        .collect();
    let errors: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    stop_console_server(&root);
    assert!(
        errors.is_empty(),
        "{} edits failed, e.g. {:?}",
        errors.len(),
        errors[0]
    );
    let text = std::fs::read_to_string(root.join("shared.txt")).unwrap();
    let done = text.lines().filter(|l| l.contains(": done by ")).count();
    assert_eq!(done, 2 * EDITS, "edits were lost:\n{text}");
    assert_eq!(names(&root), ["shared.txt"]);
}

/// `context-pilot tool`'s own example of `key=value` arguments works as typed in a shell
/// (the shell takes the quotes off `content="hello world"`).
#[test]
fn the_tool_command_takes_key_values_as_a_shell_passes_them() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let line = format!(
        "'{}' tool File_write file_path=notes.txt content=\"hello world\"",
        crate::util::binary().display()
    );
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(&line)
        .current_dir(&root)
        .env_remove("CP_WORKER")
        .env("XDG_CONFIG_HOME", cp_e2e::config_home());
    let out = shell.output().unwrap();
    assert!(out.status.success(), "{line}: {out:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "hello world"
    );
    stop_console_server(&root);
}
