//! A private Gemini CLI home for one run (`GEMINI_CLI_HOME`): the person's own `~/.gemini`
//! seen through links, with a `settings.json` that is theirs plus Context Pilot's wiring.
//!
//! Why a home and not a system-settings file: Gemini CLI 0.61 loads a system settings file
//! (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`) and system defaults (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`)
//! only when the file and every folder above it belong to root and none is world-writable
//! (`_doLoadSettings` → `loadSystemFile` → `isFileAndDirectorySecureSync` in
//! `packages/cli/src/config/settings.ts`); for anyone else it prints "Security Warning:
//! Skipping system settings file … is not owned by root (uid 0)" and runs without them. The
//! user settings have no such check, and their place follows `GEMINI_CLI_HOME`
//! (`homedir()` in `packages/core/src/utils/paths.ts`, read by `Storage.getGlobalGeminiDir`
//! and so by `getGlobalSettingsPath`, `getOAuthCredsPath`, `getGoogleAccountsPath`, the
//! session store under `tmp/`, extensions, commands, skills and `GEMINI.md`). Extensions are
//! found there too, so linking one in would mean writing into the person's `~/.gemini`.
//!
//! So the run points `GEMINI_CLI_HOME` at a private directory whose `.gemini/` links every
//! entry of the person's real one (`oauth_creds.json`, `google_accounts.json`, `tmp/` with
//! the sessions, …), so sign-in, token refreshes (written through the link) and
//! `--resume` keep working, and whose `settings.json` is a copy of theirs with the wiring
//! merged in: our MCP server replaces an entry of the same name, our hooks come after theirs.
//! Nothing is written into the project, and their `settings.json` is only read. Their
//! `~/.gemini/tmp` and `history` are made when missing, as Gemini CLI itself would on its first
//! run, so the sessions of the run outlive it (a `projects.json` it creates during the run is
//! replaced by rename, so it stays in the private home; Gemini CLI finds a project's folder
//! again by the marker inside it). `~/.env` and `~/.agents` are linked too (Gemini CLI looks
//! for them in its home).
//!
//! One difference from a system-settings file: user settings rank below the project's
//! `.gemini/settings.json` (`mergeSettings`: defaults, system defaults, user, workspace,
//! system). Hooks are concatenated across scopes, so ours still run; but an MCP server named
//! `context-pilot` in the project (what `context-pilot init gemini` writes) replaces the run's
//! entry (`mcpServers` merge shallowly): the same server, without the run's worker variable
//! and without the handoff turn's `includeTools`.

use std::ffi::OsStr;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::AgentError;

/// Gemini CLI's variable for its home (where it looks for `.gemini/`).
pub(super) const HOME_ENV: &str = "GEMINI_CLI_HOME";
/// Gemini CLI's folder in a home.
const GEMINI_DIR: &str = ".gemini";
/// The settings file in it.
const SETTINGS: &str = "settings.json";
/// Gemini CLI's state that must outlive the run (sessions, prompt history).
const KEPT_STATE: [&str; 2] = ["tmp", "history"];
/// What Gemini CLI reads beside `.gemini/` in its home.
const HOME_ENTRIES: [&str; 2] = [".env", ".agents"];

/// The person's own Gemini CLI home: `GEMINI_CLI_HOME` when they set it, else `HOME`.
pub(super) fn person_home() -> Option<PathBuf> {
    [HOME_ENV, "HOME"]
        .into_iter()
        .find_map(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
        .map(PathBuf::from)
}

/// Makes `home` (a new directory) a Gemini CLI home holding `person`'s `.gemini` through
/// links and their settings with `wiring` merged in.
pub(super) fn build(home: &Path, person: Option<&Path>, wiring: &Value) -> Result<(), AgentError> {
    let overlay = home.join(GEMINI_DIR);
    make_private_dir(&overlay)?;
    let mut settings = Value::Object(Map::new());
    if let Some(person) = person {
        let real = person.join(GEMINI_DIR);
        // Gemini CLI's session store and prompt history must outlive the run: they live in
        // the real home (made as Gemini CLI itself makes them on its first run).
        for name in KEPT_STATE {
            make_private_dir(&real.join(name))?;
        }
        link_entries(&real, &overlay)?;
        for name in HOME_ENTRIES {
            link_if_present(&person.join(name), &home.join(name))?;
        }
        settings = person_settings(&real.join(SETTINGS))?;
    }
    merge_wiring(&mut settings, wiring);
    let path = overlay.join(SETTINGS);
    std::fs::write(&path, format!("{settings:#}\n"))
        .map_err(|source| AgentError::Wiring { path, source })
}

fn make_private_dir(dir: &Path) -> Result<(), AgentError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| AgentError::Wiring {
            path: dir.to_owned(),
            source,
        })
}

/// Links every entry of `real` but the settings into `overlay`.
fn link_entries(real: &Path, overlay: &Path) -> Result<(), AgentError> {
    let entries = match std::fs::read_dir(real) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(AgentError::Wiring {
                path: real.to_owned(),
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| AgentError::Wiring {
            path: real.to_owned(),
            source,
        })?;
        let name = entry.file_name();
        if name == OsStr::new(SETTINGS) {
            continue;
        }
        link_if_present(&entry.path(), &overlay.join(&name))?;
    }
    Ok(())
}

fn link_if_present(target: &Path, link: &Path) -> Result<(), AgentError> {
    if std::fs::symlink_metadata(target).is_err() {
        return Ok(());
    }
    std::os::unix::fs::symlink(target, link).map_err(|source| AgentError::Wiring {
        path: link.to_owned(),
        source,
    })
}

/// The person's settings (an empty object when they have none). Gemini CLI allows comments
/// in them; a file that is not a JSON object is an error naming it (nothing is written).
fn person_settings(path: &Path) -> Result<Value, AgentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Value::Object(Map::new())),
        Err(source) => {
            return Err(AgentError::Wiring {
                path: path.to_owned(),
                source,
            });
        }
    };
    let invalid = |message: String| AgentError::Settings {
        path: path.to_owned(),
        message,
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(&strip_comments(&text)) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(invalid("not a JSON object".to_owned())),
        Err(e) => Err(invalid(e.to_string())),
    }
}

/// `text` with `//` and `/* */` comments outside strings blanked (line numbers kept).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Merges the run's wiring into the person's settings as Gemini CLI merges scopes: objects
/// key by key, arrays (the hooks of an event) theirs then ours, an MCP server of the same
/// name replaced by ours, anything else ours.
fn merge_wiring(settings: &mut Value, wiring: &Value) {
    match (settings, wiring) {
        (Value::Object(theirs), Value::Object(ours)) => {
            for (key, value) in ours {
                match (theirs.get_mut(key), value) {
                    (Some(Value::Object(servers)), Value::Object(our_servers))
                        if key == "mcpServers" =>
                    {
                        for (name, server) in our_servers {
                            servers.insert(name.clone(), server.clone());
                        }
                    }
                    (Some(slot), _) => merge_wiring(slot, value),
                    (None, _) => {
                        theirs.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(theirs), Value::Array(ours)) => theirs.extend(ours.iter().cloned()),
        (theirs, ours) => *theirs = ours.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_home_links_the_persons_files_and_merges_their_settings_with_the_wiring() {
        let person = tempfile::tempdir().unwrap();
        let real = person.path().join(GEMINI_DIR);
        std::fs::create_dir_all(real.join("extensions")).unwrap();
        std::fs::write(real.join("oauth_creds.json"), "{\"token\": 1}").unwrap();
        let theirs = "{\n  // their own server and hook\n  \"mcpServers\": {\"theirs\": {\"command\": \"x\"}, \"context-pilot\": {\"command\": \"old\"}},\n  \"hooks\": {\"BeforeAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine /* not a comment */\"}]}]},\n  \"ui\": {\"theme\": \"Dracula\"}\n}\n";
        std::fs::write(real.join(SETTINGS), theirs).unwrap();
        std::fs::write(person.path().join(".env"), "GEMINI_API_KEY=k\n").unwrap();
        let wiring = json!({
            "mcpServers": {"context-pilot": {"command": "context-pilot"}},
            "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "probe"}]}]},
            "security": {"folderTrust": {"enabled": false}},
        });
        let run = tempfile::tempdir().unwrap();
        let home = run.path().join("home");
        build(&home, Some(person.path()), &wiring).unwrap();

        let overlay = home.join(GEMINI_DIR);
        // Credentials are the person's own file, through a link (a refresh writes theirs).
        assert_eq!(
            std::fs::read_link(overlay.join("oauth_creds.json")).unwrap(),
            real.join("oauth_creds.json")
        );
        assert_eq!(
            std::fs::read_link(overlay.join("extensions")).unwrap(),
            real.join("extensions")
        );
        assert_eq!(
            std::fs::read_link(home.join(".env")).unwrap(),
            person.path().join(".env")
        );
        // The session store is made in the real home, so sessions outlive the run.
        assert!(real.join("tmp").is_dir() && overlay.join("tmp").is_symlink());
        let merged: Value =
            serde_json::from_str(&std::fs::read_to_string(overlay.join(SETTINGS)).unwrap())
                .unwrap();
        assert_eq!(merged["mcpServers"]["theirs"]["command"], "x");
        assert_eq!(
            merged["mcpServers"]["context-pilot"]["command"],
            "context-pilot"
        );
        let hooks: Vec<&str> = merged["hooks"]["BeforeAgent"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["hooks"][0]["command"].as_str().unwrap())
            .collect();
        assert_eq!(hooks, ["mine /* not a comment */", "probe"]);
        assert_eq!(merged["ui"]["theme"], "Dracula");
        assert_eq!(merged["security"]["folderTrust"]["enabled"], false);
        // Their settings file is only read.
        assert_eq!(
            std::fs::read_to_string(real.join(SETTINGS)).unwrap(),
            theirs
        );
        assert!(!overlay.join(SETTINGS).is_symlink());
        // Removing the run's home removes the links, never what they point to.
        drop(run);
        assert!(!home.exists());
        assert!(real.join("oauth_creds.json").is_file() && real.join("extensions").is_dir());
        assert!(person.path().join(".env").is_file());
    }

    #[test]
    fn a_person_without_gemini_settings_gets_the_wiring_alone() {
        let person = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        let home = run.path().join("home");
        build(&home, Some(person.path()), &json!({"hooks": {}})).unwrap();
        let merged = std::fs::read_to_string(home.join(GEMINI_DIR).join(SETTINGS)).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&merged).unwrap(),
            json!({"hooks": {}})
        );
    }

    #[test]
    fn settings_that_are_not_json_are_an_error_naming_the_file() {
        let person = tempfile::tempdir().unwrap();
        let real = person.path().join(GEMINI_DIR);
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join(SETTINGS), "{\"ui\": ").unwrap();
        let run = tempfile::tempdir().unwrap();
        let err = build(&run.path().join("home"), Some(person.path()), &json!({})).unwrap_err();
        assert!(matches!(err, AgentError::Settings { .. }), "{err}");
        assert!(err.to_string().contains("settings.json"), "{err}");
    }

    #[test]
    fn comments_are_blanked_outside_strings_only() {
        let text = "{\"a\": \"//x\", /* b */ \"c\": 1 // d\n}";
        assert_eq!(
            serde_json::from_str::<Value>(&strip_comments(text)).unwrap(),
            json!({"a": "//x", "c": 1})
        );
    }
}
