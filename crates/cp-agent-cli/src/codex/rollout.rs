//! Codex CLI's session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`),
//! where each request's prompt size is found: an `event_msg` whose payload is a
//! `token_count` with `info.last_token_usage.input_tokens` (the request's prompt, cached
//! tokens included) and `info.model_context_window`. The thread totals of `exec --json`'s
//! `turn.completed` grow with every request and say nothing about the context.
//!
//! A `{"type": "compacted"}` record is Codex compacting the thread by itself (at about 90 % of
//! its window): a breach of the context threshold, as for Claude Code.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::item::Item;

/// The session file of thread `id` under `CODEX_HOME` (from `env`, else the process's, else
/// `~/.codex`), once Codex has created it.
pub(super) fn locate(env: &[(String, String)], id: &str) -> Option<PathBuf> {
    let sessions = codex_home(env)?.join("sessions");
    let suffix = format!("-{id}.jsonl");
    // Newest day first: a thread's file lies in the day it started.
    for year in newest_first(&sessions) {
        for month in newest_first(&year) {
            for day in newest_first(&month) {
                let found = std::fs::read_dir(&day)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .find(|entry| {
                        let name = entry.file_name();
                        let name = name.to_string_lossy();
                        name.starts_with("rollout-") && name.ends_with(&suffix)
                    });
                if let Some(entry) = found {
                    return Some(entry.path());
                }
            }
        }
    }
    None
}

/// Codex's home: `CODEX_HOME` as the invocation gets it, else `~/.codex`.
fn codex_home(env: &[(String, String)]) -> Option<PathBuf> {
    let from_env = env
        .iter()
        .rev()
        .find(|(k, _)| k == "CODEX_HOME")
        .map(|(_, v)| v.into())
        .or_else(|| std::env::var_os("CODEX_HOME"));
    match from_env.filter(|v| !v.is_empty()) {
        Some(home) => Some(PathBuf::from(home)),
        None => std::env::var_os("HOME").map(|home| Path::new(&home).join(".codex")),
    }
}

/// The subdirectories of `dir`, newest name first.
fn newest_first(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort_unstable_by(|a, b| b.cmp(a));
    dirs
}

/// The items of one line of a session file: the window and prompt size of a request, or a
/// compaction.
pub(super) fn parse_line(line: &str) -> Vec<Item> {
    let Ok(record) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    match record["type"].as_str() {
        Some("compacted") => vec![Item::Compacted],
        Some("event_msg") if record["payload"]["type"] == "token_count" => {
            let info = &record["payload"]["info"];
            let Some(prompt_tokens) = info["last_token_usage"]["input_tokens"].as_u64() else {
                return Vec::new();
            };
            let mut items: Vec<Item> = info["model_context_window"]
                .as_u64()
                .map(Item::Window)
                .into_iter()
                .collect();
            items.push(Item::Usage {
                message_id: None,
                prompt_tokens,
                model: None,
            });
            items
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_token_count_gives_the_requests_prompt_and_window_and_compaction_is_seen() {
        let line = json!({"timestamp": "t", "type": "event_msg", "payload": {
            "type": "token_count", "info": {
                "total_token_usage": {"input_tokens": 90_000, "output_tokens": 10},
                "last_token_usage": {"input_tokens": 30_000, "cached_input_tokens": 20_000,
                                     "output_tokens": 5},
                "model_context_window": 258_400}}});
        assert_eq!(
            parse_line(&line.to_string()),
            [
                Item::Window(258_400),
                Item::Usage {
                    message_id: None,
                    prompt_tokens: 30_000,
                    model: None
                }
            ]
        );
        let empty = json!({"type": "event_msg", "payload": {"type": "token_count", "info": null}});
        assert!(parse_line(&empty.to_string()).is_empty());
        let compacted = json!({"type": "compacted", "payload": {"message": ""}});
        assert_eq!(parse_line(&compacted.to_string()), [Item::Compacted]);
        assert!(parse_line("{\"type\": \"response_item\"}").is_empty());
    }

    #[test]
    fn the_file_is_found_by_its_thread_under_codex_home() {
        let home = tempfile::tempdir().unwrap();
        let env = vec![("CODEX_HOME".to_owned(), home.path().display().to_string())];
        assert_eq!(locate(&env, "01a2"), None);
        let day = home.path().join("sessions/2026/11/26");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-11-26T09-47-47-0000.jsonl"), "").unwrap();
        let file = day.join("rollout-2026-11-26T09-48-50-01a2.jsonl");
        std::fs::write(&file, "").unwrap();
        assert_eq!(locate(&env, "01a2"), Some(file));
    }
}
