//! The crate map holds: the front-ends that draw nothing build without the UI libraries.
//! `cp-base` and the module crates draw only with their `draw` feature, which the TUI alone
//! turns on; these tests fail when a dependency or an unguarded `use ratatui` brings drawing
//! (or tokio, which only `cp-mcp` may use) back into the hook, the headless run or `init`.

use std::process::Command;

/// The crates that must build without ratatui and tokio.
const WITHOUT_UI: [&str; 4] = ["cp-hook", "cp-run", "cp-setup", "cp-host"];

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// The dependencies `krate` must not have.
fn banned(krate: &str) -> &'static [&'static str] {
    if krate == "cp-mcp" {
        &["ratatui ", "crossterm "]
    } else {
        &["ratatui ", "tokio ", "crossterm ", "rmcp "]
    }
}

#[test]
fn the_front_ends_that_draw_nothing_depend_on_no_ui_library() {
    for krate in WITHOUT_UI.into_iter().chain(["cp-mcp"]) {
        let out = cargo()
            .args([
                "tree",
                "--offline",
                "-e",
                "normal",
                "--prefix",
                "none",
                "-p",
                krate,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = String::from_utf8_lossy(&out.stdout);
        for banned in banned(krate) {
            assert!(
                !tree.lines().any(|line| line.starts_with(banned)),
                "{krate} depends on {banned}:\n{tree}"
            );
        }
    }
}

#[test]
fn the_front_ends_that_draw_nothing_build_without_the_draw_feature() {
    let mut command = cargo();
    command.args(["check", "--offline", "--quiet", "--lib"]);
    for krate in WITHOUT_UI {
        command.args(["-p", krate]);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "a crate that draws nothing does not build without `draw`:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
