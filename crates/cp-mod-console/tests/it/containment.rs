//! What a console may leave behind: no process after a timeout or a kill (even one that
//! left the process group with `setsid`), a bounded log, private files, and a clear error
//! when the server is at its limit.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

use std::time::Duration;

use crate::util::{Project, Stray};
use cp_e2e::{eventually, eventually_with};
use cp_mod_console::{ConsoleStatus, KillCause, SpawnSpec};

const LONG: Duration = Duration::from_secs(60);

#[test]
fn a_timeout_ends_a_daemon_that_left_the_group_with_setsid() {
    let p = Project::new();
    let stray = Stray::new();
    let s = p
        .client
        .spawn(SpawnSpec::new(stray.script(), &p.root).timeout(Duration::from_secs(2)))
        .unwrap();
    let done = s.wait_exit(LONG).unwrap();
    assert_eq!(
        done.info.status,
        ConsoleStatus::Killed {
            cause: KillCause::Timeout
        }
    );
    eventually_with(
        "the timed-out console's processes to end",
        LONG,
        || stray.pids().is_empty(),
        || format!("they survive: {:?}", stray.pids()),
    );
}

#[test]
fn a_kill_ends_a_daemon_that_left_the_group_with_setsid() {
    let p = Project::new();
    let stray = Stray::new();
    let s = p.spawn(&stray.script());
    eventually("the setsid daemon to start", LONG, || {
        stray.daemon_running()
    });
    let info = s.kill().unwrap();
    assert_eq!(
        info.status,
        ConsoleStatus::Killed {
            cause: KillCause::Request
        }
    );
    eventually_with(
        "the killed console's processes to end",
        LONG,
        || stray.pids().is_empty(),
        || format!("they survive: {:?}", stray.pids()),
    );
}

#[test]
fn run_files_are_private_even_when_they_existed_with_loose_modes() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let p = Project::new();
    // What an older version left: a world-readable run dir and log.
    let consoles = p.root.join(".context-pilot/run/consoles");
    std::fs::create_dir_all(&consoles).unwrap();
    let old_log = consoles.join("old.log");
    std::fs::write(&old_log, "secret").unwrap();
    for (path, m) in [
        (p.root.join(".context-pilot/run"), 0o755),
        (consoles.clone(), 0o755),
        (old_log.clone(), 0o644),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let s = p.spawn("echo private");
    assert!(s.wait_exit(LONG).unwrap().met);
    let run = p.root.join(".context-pilot/run");
    assert_eq!(mode(&run), 0o700);
    assert_eq!(mode(&consoles), 0o700);
    assert_eq!(mode(&old_log), 0o600);
    let id = s.id();
    for file in [
        consoles.join(format!("{id}.log")),
        consoles.join(format!("{id}.json")),
        run.join("console-server.pid"),
        run.join("console-server.lock"),
        run.join("console-launch.lock"),
        run.join("console-server.log"),
    ] {
        // The console's record is written as its end is answered, not before: wait for it.
        eventually(&format!("{} to be written", file.display()), LONG, || {
            file.exists()
        });
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn a_flood_leaves_a_bounded_log_that_says_what_was_dropped() {
    use cp_mod_console::{DEFAULT_LOG_HEAD_BYTES, DEFAULT_LOG_TAIL_BYTES};
    let p = Project::new();
    // 20 MB of "FLOOD\n" (the terminal makes each "\n" a "\r\n"): far past head + tail.
    let s = p.spawn("yes FLOOD | head -c 20000000");
    let done = s.wait_exit(LONG).unwrap();
    assert_eq!(done.info.status, ConsoleStatus::Exited { code: 0 });
    let log = std::fs::read(s.log_path()).unwrap();
    let note_max = 200;
    assert!(
        (log.len() as u64) <= DEFAULT_LOG_HEAD_BYTES + DEFAULT_LOG_TAIL_BYTES + note_max,
        "log of {} bytes",
        log.len()
    );
    assert_eq!(done.info.output_len, log.len() as u64);
    let text = String::from_utf8_lossy(&log);
    assert!(text.starts_with("FLOOD\r\nFLOOD\r\n"), "{}", &text[..40]);
    assert!(
        text.ends_with("FLOOD\r\nFL"),
        "{}",
        &text[text.len() - 40..]
    );
    let output: u64 = 3_333_333 * 7 + 2;
    let dropped = output - DEFAULT_LOG_HEAD_BYTES - DEFAULT_LOG_TAIL_BYTES;
    assert!(
        text.contains(&format!(
            "[context-pilot: {dropped} bytes of output dropped here; a console log keeps the \
             first {DEFAULT_LOG_HEAD_BYTES} and the last {DEFAULT_LOG_TAIL_BYTES} bytes]"
        )),
        "no (or a wrong) note about the dropped bytes"
    );
}

/// A finished console's record and log, as an earlier server left them.
fn finished_console(
    root: &std::path::Path,
    ended_ago: Duration,
    log_bytes: usize,
    status: ConsoleStatus,
) -> uuid::Uuid {
    let id = uuid::Uuid::new_v4();
    let consoles = root.join(".context-pilot/run/consoles");
    std::fs::create_dir_all(&consoles).unwrap();
    let now = cp_base::now_ms();
    let ended = now - u64::try_from(ended_ago.as_millis()).unwrap();
    let running = status.is_running();
    let info = cp_mod_console::ConsoleInfo {
        id,
        command: "old".into(),
        cwd: root.to_path_buf(),
        description: None,
        label: None,
        pid: None,
        status,
        started_at_ms: ended - 1000,
        ended_at_ms: (!running).then_some(ended),
        output_len: log_bytes as u64,
        server_instance: uuid::Uuid::new_v4(),
        rows: 24,
        cols: 80,
    };
    std::fs::write(
        consoles.join(format!("{id}.json")),
        serde_json::to_vec(&info).unwrap(),
    )
    .unwrap();
    std::fs::write(consoles.join(format!("{id}.log")), vec![b'x'; log_bytes]).unwrap();
    id
}

#[test]
fn logs_of_finished_consoles_are_pruned_by_age_and_total_size() {
    let p = Project::with_config(|cfg| {
        cfg.server_env
            .insert("CP_CONSOLE_LOGS_MAX_AGE_MS".into(), "3600000".into());
        cfg.server_env
            .insert("CP_CONSOLE_LOGS_MAX_BYTES".into(), "10000".into());
    });
    let exited = ConsoleStatus::Exited { code: 0 };
    let hour = Duration::from_secs(3600);
    let too_old = finished_console(&p.root, 2 * hour, 10, exited.clone());
    let older = finished_console(&p.root, hour / 6, 6000, exited.clone());
    let newer = finished_console(&p.root, hour / 12, 5000, exited);
    // Left running by a server that crashed: not pruned for size while it is the newest.
    let lost = finished_console(&p.root, Duration::ZERO, 100, ConsoleStatus::Running);
    let s = p.spawn("echo started");
    assert!(s.wait_exit(LONG).unwrap().met);
    let consoles = p.root.join(".context-pilot/run/consoles");
    let exists = |id: uuid::Uuid| consoles.join(format!("{id}.log")).exists();
    assert!(!exists(too_old), "a log older than the age limit is kept");
    assert!(
        !consoles.join(format!("{too_old}.json")).exists(),
        "its record is kept"
    );
    assert!(!exists(older), "the oldest log over the size limit is kept");
    assert!(exists(newer), "a log within both limits was deleted");
    assert!(exists(lost), "the newest (lost) console's log was deleted");
    assert!(
        exists(s.id()),
        "the running server's own console log was deleted"
    );
}

#[test]
fn a_server_at_its_console_limit_says_so_and_starts_nothing() {
    let p = Project::with_config(|cfg| {
        cfg.server_env
            .insert(cp_mod_console::MAX_CONSOLES_ENV.into(), "2".into());
    });
    let stray = Stray::new();
    let first = p.spawn(&format!("sleep 300.{}", stray.tag));
    let second = p.spawn(&format!("sleep 300.{}", stray.tag));
    let err = p
        .client
        .spawn(SpawnSpec::new(
            format!("echo third > started; sleep 300.{}", stray.tag),
            &p.root,
        ))
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("at its limit of 2 running consoles"),
        "unclear error: {msg}"
    );
    assert!(!p.root.join("started").exists(), "the third command ran");
    // A place frees up when a console ends.
    first.kill().unwrap();
    let third = p.spawn("echo third");
    assert!(third.wait_exit(LONG).unwrap().met);
    second.kill().unwrap();
}

#[test]
fn a_server_at_its_client_limit_says_so() {
    let p = Project::with_config(|cfg| {
        cfg.server_env
            .insert("CP_CONSOLE_MAX_CLIENTS".into(), "2".into());
    });
    // Two clients that keep their connection open take both places (the launch's probe
    // connection may hold one for a moment, hence the retry).
    p.spawn("true");
    let second = p.new_client();
    eventually("the second client to be served", LONG, || {
        second.server_pid().is_some()
    });
    let msg = p.new_client().list().unwrap_err().to_string();
    assert!(
        msg.contains("at its limit of 2 connected clients"),
        "unclear error: {msg}"
    );
}
