//! `context-pilot completions SHELL`: the script parses in its shell, and in bash it completes
//! a subcommand the way a person pressing Tab would see it.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::process::Command;

use cp_e2e::binary_path;

fn completions(shell: &str) -> String {
    let out = Command::new(binary_path())
        .args(["completions", shell])
        // Outside any project: completions need none.
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_bash_script_parses_and_completes_ru_to_run() {
    let script = completions("bash");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("context-pilot.bash");
    std::fs::write(&path, &script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    // What bash does on Tab after `context-pilot ru`: call the registered function with the
    // words so far, then offer COMPREPLY.
    let session = format!(
        "source {}\n\
         COMP_WORDS=(context-pilot ru); COMP_CWORD=1\n\
         COMP_LINE='context-pilot ru'; COMP_POINT=${{#COMP_LINE}}\n\
         $(complete -p context-pilot | sed -E 's/.*-F ([^ ]+).*/\\1/') context-pilot ru context-pilot\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        path.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &session])
        .output()
        .unwrap();
    let offered = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        offered.lines().collect::<Vec<_>>(),
        ["run"],
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_refused() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(
            completions(shell).contains("context-pilot"),
            "{shell}: no script"
        );
    }
    let out = Command::new(binary_path())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid value 'tcsh'") && stderr.contains("bash"),
        "{stderr}"
    );
}
