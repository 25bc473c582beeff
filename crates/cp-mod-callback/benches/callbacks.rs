//! Callback benchmarks (run with `cargo bench -p cp-mod-callback`; figures in BENCHMARKS.md).
//!
//! 1. Overhead of a blocking no-op callback (`on_batch` + hold: plan, console, wait,
//!    report) above a bare `bash -c true`, as medians.
//! 2. Matching and planning 10,000 changed paths against 100 callbacks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    reason = "benchmark harness: fail loudly, print floats"
)]

use std::process::Command;
use std::time::{Duration, Instant};

use cp_base::{
    BatchChanges, CallChanges, ChangeKind, FileChange, Module, Notifier, Project, ToolEnv, WorkerId,
};
use cp_mod_callback::{CallbackDef, CallbackId, CallbackModule, CallbackSection, Matcher, plan};
use cp_mod_console::{ClientConfig, ConsoleClient, SpawnSpec};
use serde_json::json;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `median (min–max)` in milliseconds.
fn spread(samples: &[Duration]) -> String {
    let mut s = samples.to_vec();
    s.sort();
    format!(
        "{:8.2} ms (min {:.2}, max {:.2})",
        ms(s[s.len() / 2]),
        ms(s[0]),
        ms(s[s.len() - 1])
    )
}

fn bench_blocking_noop(rounds: usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut console = ClientConfig::new(&root);
    console.server_exe = Some(cp_mod_console::server_exe_for_tests().unwrap());
    // Trust is recorded in a temp store, never in the user's ~/.config.
    let trust = tempfile::tempdir().unwrap();
    let project = Project::at(&root)
        .with_trust_store(cp_base::TrustStore::at(trust.path().join("trust.json")));
    let env = ToolEnv::new(project.clone(), WorkerId::default(), Notifier::new());
    let mut module = CallbackModule::with_console(project, WorkerId::default(), console.clone());
    let created = module
        .call_tool(
            "Callback_upsert",
            &json!({"action": "create", "name": "noop", "pattern": "*.rs",
                    "script_content": "true", "blocking": true, "timeout": 60}),
            &env,
        )
        .finish();
    assert!(!created.is_error, "{}", created.text);
    std::fs::write(root.join("a.rs"), "").unwrap();
    let batch = BatchChanges {
        calls: vec![CallChanges {
            call_index: 0,
            tool: "File_edit".into(),
            label: "File_edit a.rs".into(),
            changes: vec![FileChange::new("a.rs", ChangeKind::Modified)],
        }],
    };
    let client = ConsoleClient::new(console).unwrap();
    // Warm up: start the server, fill caches.
    for _ in 0..3 {
        let hold = module.on_batch(&batch, &env).hold.unwrap();
        assert!(hold()[0].text.contains("passed"));
    }
    let mut bare = Vec::new();
    let mut session = Vec::new();
    let mut callback = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        assert!(
            Command::new("bash")
                .args(["-c", "true"])
                .status()
                .unwrap()
                .success()
        );
        bare.push(t.elapsed());

        let t = Instant::now();
        let s = client.spawn(SpawnSpec::new("true", &root)).unwrap();
        let done = s.wait_exit(Duration::from_secs(30)).unwrap();
        assert!(done.info.status.is_success());
        session.push(t.elapsed());

        let t = Instant::now();
        let hold = module.on_batch(&batch, &env).hold.unwrap();
        let notes = hold();
        callback.push(t.elapsed());
        assert!(notes[0].text.contains("passed"), "{}", notes[0].text);
    }
    let _ = client.shutdown_server();
    println!("blocking no-op callback, median of {rounds}:");
    println!("  bare `bash -c true`            {}", spread(&bare));
    println!("  console `true`         {}", spread(&session));
    println!("  callback (on_batch + hold)     {}", spread(&callback));
    let (b, s, c) = (median(bare), median(session), median(callback));
    println!(
        "  overhead above bare bash       {:8.2} ms (target < 5 ms)",
        ms(c.saturating_sub(b))
    );
    println!(
        "  overhead above console {:8.2} ms",
        ms(c.saturating_sub(s))
    );
}

fn bench_matching(rounds: usize) {
    let exts = [
        "rs", "ts", "py", "md", "go", "c", "h", "toml", "yaml", "json",
    ];
    let mut section = CallbackSection::default();
    for i in 0..100u64 {
        let ext = exts[(i % 10) as usize];
        let pattern = match i % 4 {
            0 => vec![format!("*.{ext}"), "!target/".to_owned()],
            1 => vec![format!("src/mod{i}/**/*.{ext}")],
            2 => vec![format!("docs{i}/"), format!("!docs{i}/private/**")],
            _ => vec![
                format!("pkg{}/*.{ext}", i % 7),
                format!("!pkg{}/gen_*", i % 7),
            ],
        };
        let def = CallbackDef {
            id: CallbackId(i + 1),
            name: format!("cb{i}"),
            description: String::new(),
            pattern,
            blocking: false,
            timeout: None,
            success_message: None,
            cwd: None,
            one_at_a_time: false,
            once_per_batch: i % 2 == 0,
        };
        section.set_active("main", def.id, true);
        section.definitions.push(def);
    }
    let paths: Vec<String> = (0..10_000)
        .map(|i| {
            let ext = exts[i % 10];
            match i % 5 {
                0 => format!("src/mod{}/sub/file{i}.{ext}", i % 100),
                1 => format!("docs{}/page{i}.md", i % 100),
                2 => format!("pkg{}/file{i}.{ext}", i % 7),
                3 => format!("target/debug/build/f{i}.rs"),
                _ => format!("deep/a/b/c/d/file{i}.{ext}"),
            }
        })
        .collect();
    let batch = BatchChanges {
        calls: paths
            .chunks(100)
            .enumerate()
            .map(|(i, chunk)| CallChanges {
                call_index: i,
                tool: "File_write".into(),
                label: format!("call {i}"),
                changes: chunk
                    .iter()
                    .map(|p| FileChange::new(p.clone(), ChangeKind::Modified))
                    .collect(),
            })
            .collect(),
    };
    let mut globs = Vec::new();
    for d in &section.definitions {
        for r in &d.pattern {
            let r = r.trim_start_matches('!').trim_end_matches('/');
            globs.push(if r.contains('/') {
                r.to_owned()
            } else {
                format!("**/{r}")
            });
        }
    }
    let t = Instant::now();
    let matcher = Matcher::new(
        section
            .definitions
            .iter()
            .map(|d| (d.id, d.pattern.as_slice())),
    );
    let build = t.elapsed();
    let mut match_times = Vec::new();
    let mut plan_times = Vec::new();
    let mut runs = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let hits = matcher.match_all(paths.iter().map(String::as_str));
        match_times.push(t.elapsed());
        assert_eq!(hits.len(), paths.len());
        let t = Instant::now();
        runs = plan(&batch, &section, &matcher, "main").len();
        plan_times.push(t.elapsed());
    }
    println!("matching 10,000 changed paths against 100 callbacks, median of {rounds}:");
    raw_globset_baseline(&paths, &globs);
    println!(
        "  compile the GlobSet (once per config change) {:8.2} ms",
        ms(build)
    );
    println!(
        "  match all paths                               {:8.2} ms (target < 5 ms)",
        ms(median(match_times))
    );
    println!(
        "  plan the runs (match + group, {runs} runs)      {:8.2} ms",
        ms(median(plan_times))
    );
}

fn main() {
    // `cargo test --benches` passes no `--bench`; keep that run short.
    let full = std::env::args().any(|a| a == "--bench");
    let rounds = if full { 50 } else { 3 };
    bench_matching(rounds);
    bench_blocking_noop(rounds);
}

/// Reference: one plain `GlobSet` lookup per path, without gitignore semantics.
fn raw_globset_baseline(paths: &[String], globs: &[String]) {
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        b.add(
            globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .unwrap(),
        );
    }
    let set = b.build().unwrap();
    let t = Instant::now();
    let mut n = 0;
    for p in paths {
        n += set.matches(p).len();
    }
    println!(
        "  reference: bare GlobSet over full paths       {:8.2} ms ({n} hits, one pass)",
        ms(t.elapsed())
    );
}
