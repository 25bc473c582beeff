//! The hook per edit through an npm install (issue 49): the suite's binary packed by
//! `scripts/package.sh`, installed with `npm install -g --prefix` from the packed tarballs, and
//! wired with its own `init claude`. The edit hook command (`PostToolBatch`) that writes is run, as
//! Claude Code runs it (`sh -c`, the payload on stdin), against the same command naming the
//! suite's binary directly, in alternating rounds; the figure is the median of the per-round
//! ratios. The hook command must name the installed native binary (an ELF file), never the
//! node launcher: the group fails otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use super::Options;
use super::common::{greet_project, time_with_stdin};
use super::stats::{Row, fmt};

pub fn npm_hook(opts: &Options) -> Vec<Row> {
    let rounds = if opts.quick { 3 } else { 40 };
    let work = tempfile::tempdir().unwrap();
    let prefix = install_with_npm(&opts.exe, work.path());

    let (_repo, root) = greet_project();
    let config_home = tempfile::tempdir().unwrap();
    let npm_command =
        init_claude_hook(&prefix.join("bin/context-pilot"), &root, config_home.path());
    let program = hook_program(&npm_command);
    let direct_command =
        npm_command.replacen(program.to_str().unwrap(), opts.exe.to_str().unwrap(), 1);
    assert_ne!(direct_command, npm_command);

    std::fs::write(root.join("src/greet.sh"), "echo hello again\n").unwrap();
    let payload = json!({
        "session_id": "bench", "transcript_path": "/dev/null", "cwd": root,
        "permission_mode": "acceptEdits", "hook_event_name": "PostToolBatch",
        "tool_calls": [{
            "tool_name": "Write",
            "tool_input": {"file_path": root.join("src/greet.sh"), "content": "echo hello again\n"},
            "tool_response": "The file src/greet.sh has been updated.",
        }],
    })
    .to_string();
    let run = |command: &str| {
        time_with_stdin(
            Command::new("sh")
                .args(["-c", command])
                .current_dir(&root)
                .env("XDG_CONFIG_HOME", config_home.path()),
            &payload,
        )
    };
    // The first call starts the project's console server and lays out its state.
    run(&direct_command);
    run(&npm_command);
    let (mut npm, mut direct, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternating which goes first, so neither always follows the other.
        let (n, d) = if round % 2 == 0 {
            let n = run(&npm_command);
            (n, run(&direct_command))
        } else {
            let d = run(&direct_command);
            (run(&npm_command), d)
        };
        npm.push(n);
        direct.push(d);
        ratios.push(n / d);
    }
    if let Ok(client) = cp_mod_console::ConsoleClient::for_project(&root) {
        let _ = client.shutdown_server();
    }
    let ratio = Row::new("", "×", ratios).median();
    vec![
        Row::new(
            "Claude Code `PostToolBatch` per edit, binary installed with npm (`init claude`'s hook)",
            "ms",
            npm,
        )
        .note(format!(
            "{}× the same binary run directly (median of per-round ratios); the hook runs \
             <prefix>/bin/context-pilot, the native ELF binary npm's install script put there, \
             no node",
            fmt(ratio)
        )),
        Row::new(
            "baseline: the same hook command naming the suite's binary directly",
            "ms",
            direct,
        ),
    ]
}

/// Wires the project at `root` with `installed`'s `init claude`, and checks that the
/// `PostToolBatch` hook it writes runs `installed`, the native binary; the hook's command.
fn init_claude_hook(installed: &Path, root: &Path, config_home: &Path) -> String {
    let init = Command::new(installed)
        .args(["init", "claude"])
        .current_dir(root)
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".claude/settings.json")).unwrap())
            .unwrap();
    let command = settings["hooks"]["PostToolBatch"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let program = hook_program(&command);
    assert_eq!(
        program.canonicalize().unwrap(),
        installed.canonicalize().unwrap(),
        "the hook runs {command}"
    );
    let head = std::fs::read(&program).unwrap();
    assert!(
        head.starts_with(b"\x7fELF"),
        "the hook runs {}, which is not the native binary",
        program.display()
    );
    command
}

/// Packs `exe` with `scripts/package.sh` and installs both npm tarballs globally into a fresh
/// prefix under `work`, from the tarballs alone (no registry); the prefix.
fn install_with_npm(exe: &Path, work: &Path) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dist = work.join("dist");
    let status = Command::new("bash")
        .arg(repo.join("scripts/package.sh"))
        .arg(exe)
        .arg(&dist)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "scripts/package.sh failed");
    let tarball = |prefix: &str| {
        std::fs::read_dir(&dist)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with(prefix) && name.ends_with(".tgz")
            })
            .unwrap()
    };
    let platform = tarball("context-pilot-linux-x64-");
    let launcher = tarball("context-pilot-0");
    let prefix = work.join("npm");
    let out = Command::new("npm")
        .args([
            "install",
            "-g",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .arg("--prefix")
        .arg(&prefix)
        .arg(&platform)
        .arg(&launcher)
        .env("npm_config_cache", work.join("npm-cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "npm install: {out:?}");
    prefix
}

/// The program a hook command runs: its first word, unquoted.
fn hook_program(command: &str) -> PathBuf {
    let first = command
        .strip_prefix('\'')
        .and_then(|rest| rest.split_once('\'').map(|(p, _)| p))
        .unwrap_or_else(|| command.split_whitespace().next().unwrap());
    PathBuf::from(first)
}
