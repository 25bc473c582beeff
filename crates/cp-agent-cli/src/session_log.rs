//! The agent's own record of a session, read as it grows: for an agent whose stream does not
//! say how large each request's prompt was (Codex CLI writes it only to its session file, as
//! `token_count` events). The file is found once the agent has named the session, and each
//! complete line is parsed into [`Item`]s by the agent's
//! [`SessionLogSpec::parse_line`](crate::spec::SessionLogSpec).

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;

use crate::item::Item;
use crate::spec::SessionLogSpec;

/// The tail of one session's record.
#[derive(Debug)]
pub struct SessionLog {
    spec: SessionLogSpec,
    env: Vec<(String, String)>,
    /// The session, once named.
    id: Option<String>,
    /// Whether the session existed before this invocation (a resume): what it recorded before
    /// is skipped.
    skip_existing: bool,
    path: Option<PathBuf>,
    offset: u64,
    /// The start of a line not yet complete.
    partial: Vec<u8>,
    /// The latest prompt size read: Codex repeats its latest figures with each rate-limit
    /// update, and a repeat is no new request.
    last_tokens: Option<u64>,
}

impl SessionLog {
    /// The record of the session `resumed` (its earlier lines skipped), or of the session the
    /// agent is about to name.
    pub fn new(spec: SessionLogSpec, env: Vec<(String, String)>, resumed: Option<String>) -> Self {
        Self {
            spec,
            env,
            skip_existing: resumed.is_some(),
            id: resumed,
            path: None,
            offset: 0,
            partial: Vec::new(),
            last_tokens: None,
        }
    }

    /// The agent named its session `id`.
    pub fn saw_session(&mut self, id: &str) {
        if self.id.as_deref() != Some(id) {
            self.id = Some(id.to_owned());
            self.path = None;
            self.offset = 0;
            self.partial.clear();
            self.skip_existing = false;
        }
    }

    /// The items of the lines written since the last call.
    pub fn read_new(&mut self) -> Vec<Item> {
        let Some(path) = self.located() else {
            return Vec::new();
        };
        let Ok(mut file) = std::fs::File::open(&path) else {
            return Vec::new();
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut fresh = Vec::new();
        if let Err(e) = file.read_to_end(&mut fresh) {
            tracing::debug!("cannot read {}: {e}", path.display());
            return Vec::new();
        }
        self.offset += fresh.len() as u64;
        self.partial.extend_from_slice(&fresh);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let complete: Vec<u8> = self.partial.drain(..=end).collect();
        let items: Vec<Item> = String::from_utf8_lossy(&complete)
            .lines()
            .flat_map(self.spec.parse_line)
            .collect();
        items
            .into_iter()
            .filter(|item| match item {
                Item::Usage { prompt_tokens, .. } => {
                    self.last_tokens.replace(*prompt_tokens) != Some(*prompt_tokens)
                }
                _ => true,
            })
            .collect()
    }

    /// The file, once it exists; a resumed session's earlier lines are skipped.
    fn located(&mut self) -> Option<PathBuf> {
        if self.path.is_none() {
            let id = self.id.as_deref()?;
            let path = (self.spec.locate)(&self.env, id)?;
            if std::mem::take(&mut self.skip_existing) {
                self.offset = std::fs::metadata(&path).map_or(0, |m| m.len());
            }
            self.path = Some(path);
        }
        self.path.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn locate(env: &[(String, String)], id: &str) -> Option<PathBuf> {
        let path = PathBuf::from(&env[0].1).join(format!("{id}.jsonl"));
        path.exists().then_some(path)
    }

    fn parse(line: &str) -> Vec<Item> {
        line.strip_prefix("tokens ")
            .and_then(|n| n.parse().ok())
            .map(|prompt_tokens| Item::Usage {
                message_id: None,
                prompt_tokens,
                model: None,
            })
            .into_iter()
            .collect()
    }

    fn tokens(items: &[Item]) -> Vec<u64> {
        items
            .iter()
            .filter_map(|item| match item {
                Item::Usage { prompt_tokens, .. } => Some(*prompt_tokens),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn complete_lines_are_read_once_and_a_resumed_sessions_past_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_owned(), dir.path().display().to_string())];
        let spec = SessionLogSpec {
            locate,
            parse_line: parse,
        };
        let mut log = SessionLog::new(spec, env.clone(), None);
        assert!(log.read_new().is_empty(), "no session named yet");
        log.saw_session("t1");
        assert!(log.read_new().is_empty(), "no file yet");
        let path = dir.path().join("t1.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        write!(file, "tokens 10\ntokens 2").unwrap();
        assert_eq!(tokens(&log.read_new()), [10]);
        write!(file, "0\nnoise\ntokens 20\n").unwrap();
        assert_eq!(tokens(&log.read_new()), [20], "a repeat is no new request");
        assert!(log.read_new().is_empty());

        let mut resumed = SessionLog::new(spec, env, Some("t1".into()));
        assert!(
            resumed.read_new().is_empty(),
            "the earlier lines are skipped"
        );
        writeln!(file, "tokens 30").unwrap();
        assert_eq!(tokens(&resumed.read_new()), [30]);
    }
}
