//! Workflows whose phases run at once (issue 26) against the scripted model server. The
//! phases' requests interleave, so the server answers each by its phase (every phase's prompt
//! carries a marker, [`marker`]), not from one queue: the first turn makes the phase's tool
//! calls, every later turn says "Done.".
//!
//! One script serves every agent: the built-in agent and Claude Code (Anthropic's wire) and
//! Gemini CLI (Gemini's wire, told apart by the request's path), each calling a tool by the
//! name it gives it (`File_write`, `mcp__context-pilot__File_write`,
//! `mcp_context-pilot_File_write`). Also here: what a run leaves behind (its record, its
//! worktrees and branches).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use cp_e2e::{LlmServer, RecordedRequest, Reply, anthropic, gemini, git};
use serde_json::{Value, json};

/// A tool call of a phase's first turn: the tool's name (as Context Pilot names it) and its
/// arguments as JSON.
pub type Call = (&'static str, String);

/// What each phase's agent does: `(phase, tool calls of its first turn)`. A phase whose prompt
/// quotes another's marker must be listed before it (the first marker found wins).
#[derive(Clone)]
pub struct Script {
    pub phases: Vec<(&'static str, Vec<Call>)>,
}

impl Script {
    /// The phase `request` belongs to: its conversation holds the phase's marker.
    pub fn phase_of(&self, request: &RecordedRequest) -> Option<&'static str> {
        self.phases
            .iter()
            .map(|(phase, _)| *phase)
            .find(|phase| request.raw_body.contains(&marker(phase)))
    }

    fn calls(&self, phase: &str) -> &[Call] {
        self.phases
            .iter()
            .find(|(p, _)| *p == phase)
            .map_or(&[], |(_, calls)| calls.as_slice())
    }
}

/// Two phases from the start: api writes `api.txt`, ui writes `ui.txt` ([`feature_script`]).
pub const TWO: &str = "\
name: two
phases:
  - id: api
    depends_on: []
    prompt: PHASE-api-MARK Write api.txt.
  - id: ui
    depends_on: []
    prompt: PHASE-ui-MARK Write ui.txt.
";

/// [`TWO`] and a phase that depends on both and reads both files.
pub const FEATURE: &str = "\
name: feature
phases:
  - id: api
    depends_on: []
    prompt: PHASE-api-MARK Write api.txt.
  - id: ui
    depends_on: []
    prompt: PHASE-ui-MARK Write ui.txt.
  - id: integrate
    depends_on: [api, ui]
    prompt: PHASE-integrate-MARK Read api.txt and ui.txt.
";

/// What the phases of [`FEATURE`] (and [`TWO`]) do: api and ui write "<phase> was here",
/// integrate reads both (listed first: its conversation may quote the others' markers).
pub fn feature_script() -> Script {
    Script {
        phases: vec![
            ("integrate", vec![read("api.txt"), read("ui.txt")]),
            ("api", vec![write("api.txt", "api was here\n")]),
            ("ui", vec![write("ui.txt", "ui was here\n")]),
        ],
    }
}

/// Two phases from the start that both rewrite `shared.txt` ([`clash_script`]): the second
/// merge conflicts.
pub const CLASH: &str = "\
name: clash
phases:
  - id: left
    depends_on: []
    prompt: PHASE-left-MARK Rewrite shared.txt.
  - id: right
    depends_on: []
    prompt: PHASE-right-MARK Rewrite shared.txt.
";

/// What the phases of [`CLASH`] do: each writes its own `shared.txt`.
pub fn clash_script() -> Script {
    Script {
        phases: vec![
            ("left", vec![write("shared.txt", "from left\n")]),
            ("right", vec![write("shared.txt", "from right\n")]),
        ],
    }
}

/// The marker a phase's prompt carries: `PHASE-<id>-MARK`.
pub fn marker(phase: &str) -> String {
    format!("PHASE-{phase}-MARK")
}

/// `File_write` of `file` (relative to the phase's tree) with `content`.
pub fn write(file: &str, content: &str) -> Call {
    (
        "File_write",
        json!({"file_path": file, "content": content}).to_string(),
    )
}

/// `File_read` of `file`.
pub fn read(file: &str) -> Call {
    ("File_read", json!({"file_path": file}).to_string())
}

/// The request bodies seen per phase, and the arrivals the responder can wait for.
#[derive(Default)]
pub struct Seen {
    by_phase: Mutex<HashMap<String, Vec<String>>>,
    arrived: Condvar,
}

impl Seen {
    /// The bodies of `phase`'s requests, in the order they arrived.
    pub fn bodies(&self, phase: &str) -> Vec<String> {
        self.by_phase
            .lock()
            .unwrap()
            .get(phase)
            .cloned()
            .unwrap_or_default()
    }

    /// Records a request of `phase`; true when it is the phase's first.
    pub fn record(&self, phase: &str, body: &str) -> bool {
        let mut by_phase = self.by_phase.lock().unwrap();
        let list = by_phase.entry(phase.to_owned()).or_default();
        list.push(body.to_owned());
        self.arrived.notify_all();
        list.len() == 1
    }

    /// Waits until `phase` sent a request; false after the timeout.
    pub fn wait_for(&self, phase: &str, timeout: Duration) -> bool {
        self.wait_requests(phase, 1, timeout)
    }

    /// Waits until `phase` sent `count` requests; false after the timeout.
    pub fn wait_requests(&self, phase: &str, count: usize, timeout: Duration) -> bool {
        let seen = self.by_phase.lock().unwrap();
        let (_seen, waited) = self
            .arrived
            .wait_timeout_while(seen, timeout, |seen| {
                seen.get(phase).is_none_or(|bodies| bodies.len() < count)
            })
            .unwrap();
        !waited.timed_out()
    }
}

/// `(phase that waits, phase it waits for, whether they met)`: proof that two phases' requests
/// were in flight at once.
pub type Hold = Option<(&'static str, &'static str, Arc<Mutex<Option<bool>>>)>;

/// The phase whose agent hangs once its tools have run (its reply never ends), if any.
pub type Stall = Arc<Mutex<Option<&'static str>>>;

/// How long a held first request waits for the other phase's.
const HOLD_LIMIT: Duration = Duration::from_secs(120);

/// Answers every request by its phase: the agent's side calls as such, the first turn with the
/// phase's tool calls, later turns with "Done." (or a reply that never ends, for the phase in
/// `stall`). `hold` makes the first request of one phase wait until another phase's first
/// request has arrived, and records whether it did.
pub fn serve(server: &LlmServer, script: Script, seen: Arc<Seen>, hold: Hold, stall: Stall) {
    serve_back(server, script, Vec::new(), seen, hold, stall);
}

/// The marker of a phase's prompt once the merge queue sent it back (issue 37): its work
/// fails merged with the run's branch.
pub const SENT_BACK: &str = "back from the merge queue";

/// [`serve`], and a phase the merge queue sent back (its prompt holds [`SENT_BACK`]) makes
/// the calls `back` lists for it in its first turn (none: it just ends its turn).
pub fn serve_back(
    server: &LlmServer,
    script: Script,
    back: Vec<(&'static str, Vec<Call>)>,
    seen: Arc<Seen>,
    hold: Hold,
    stall: Stall,
) {
    server.answer_side_requests(move |request| {
        let wire = Wire::of(request);
        if let Some(reply) = wire.side_reply(request) {
            return Some(reply);
        }
        let phase = script.phase_of(request)?;
        if seen.record(phase, &request.raw_body)
            && let Some((waiter, other, met)) = &hold
            && *waiter == phase
        {
            let arrived = seen.wait_for(other, HOLD_LIMIT);
            *met.lock().unwrap() = Some(arrived);
        }
        if !wire.has_tool_result(request) {
            let calls = if request.raw_body.contains(SENT_BACK) {
                back.iter()
                    .find(|(p, _)| *p == phase)
                    .map_or(&[][..], |(_, calls)| calls.as_slice())
            } else {
                script.calls(phase)
            };
            if calls.is_empty() {
                return Some(wire.text("Done."));
            }
            return Some(wire.tool_calls(request, phase, calls));
        }
        if *stall.lock().unwrap() == Some(phase) {
            return Some(wire.stall());
        }
        Some(wire.text("Done."))
    });
}

/// A scripted server that answers by `script` ([`serve`]), holding and stalling nothing.
pub fn serve_script(script: Script) -> LlmServer {
    let server = LlmServer::start().unwrap();
    serve(&server, script, Arc::default(), None, Arc::default());
    server
}

/// The wire format of a request: Gemini's (Gemini CLI) or Anthropic's (Claude Code, the
/// built-in agent).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    Anthropic,
    Gemini,
}

impl Wire {
    fn of(request: &RecordedRequest) -> Self {
        if request.path.contains("GenerateContent")
            || request.path.contains("generateContent")
            || request.path.contains(":countTokens")
        {
            Self::Gemini
        } else {
            Self::Anthropic
        }
    }

    fn side_reply(self, request: &RecordedRequest) -> Option<Reply> {
        match self {
            Self::Anthropic => anthropic::side_reply(request),
            Self::Gemini => gemini::side_reply(request),
        }
    }

    fn has_tool_result(self, request: &RecordedRequest) -> bool {
        request.raw_body.contains(match self {
            Self::Anthropic => "\"tool_result\"",
            Self::Gemini => "\"functionResponse\"",
        })
    }

    /// The first turn of `phase`: its calls, each under the name the agent offered the tool
    /// (else the agent CLI's name for Context Pilot's MCP tool).
    fn tool_calls(self, request: &RecordedRequest, phase: &str, calls: &[Call]) -> Reply {
        let offered = offered_tools(request);
        let named: Vec<(String, String, &str)> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let full = offered
                    .iter()
                    .find(|o| *o == name)
                    .or_else(|| offered.iter().find(|o| o.ends_with(&format!("_{name}"))))
                    .cloned()
                    .unwrap_or_else(|| self.mcp_name(name));
                (format!("toolu_{phase}{i}"), full, args.as_str())
            })
            .collect();
        match self {
            Self::Anthropic => {
                let calls: Vec<(&str, &str, &str)> = named
                    .iter()
                    .map(|(id, name, args)| (id.as_str(), name.as_str(), *args))
                    .collect();
                anthropic::tool_use_turn(&calls)
            }
            Self::Gemini => {
                let calls: Vec<(&str, &str)> = named
                    .iter()
                    .map(|(_, name, args)| (name.as_str(), *args))
                    .collect();
                gemini::tool_call_turn(&calls)
            }
        }
    }

    /// How the agent CLI on this wire names Context Pilot's MCP tool `name` (Claude Code
    /// defers MCP tools, so they are not among those its first request offers).
    fn mcp_name(self, name: &str) -> String {
        match self {
            Self::Anthropic => format!("mcp__context-pilot__{name}"),
            Self::Gemini => format!("mcp_context-pilot_{name}"),
        }
    }

    fn text(self, text: &str) -> Reply {
        match self {
            Self::Anthropic => anthropic::text_turn(text),
            Self::Gemini => gemini::text_turn(text),
        }
    }

    /// A reply that starts and never ends.
    fn stall(self) -> Reply {
        match self {
            Self::Anthropic => anthropic_stall(),
            Self::Gemini => Reply::sse_chunks(Vec::new()).then_stall(),
        }
    }
}

/// An Anthropic reply that starts (a ping) and never ends: the agent waits on it until it is
/// stopped.
pub fn anthropic_stall() -> Reply {
    Reply::sse("event: ping\ndata: {\"type\":\"ping\"}\n\n").then_stall()
}

/// The names of the tools a request offers the model (Anthropic's `tools[].name`, Gemini's
/// `tools[].functionDeclarations[].name`).
fn offered_tools(request: &RecordedRequest) -> Vec<String> {
    let mut names = Vec::new();
    for tool in request.body["tools"].as_array().into_iter().flatten() {
        if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        }
        for declared in tool["functionDeclarations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(name) = declared["name"].as_str() {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// The run's saved record (`.context-pilot/runs/<id>/context.json`), once it is readable.
pub fn run_record(dir: &Path) -> Option<Value> {
    let run = std::fs::read_dir(dir.join(".context-pilot/runs"))
        .ok()?
        .flatten()
        .next()?;
    let text = std::fs::read_to_string(run.path().join("context.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether the run's branch for `phase` (`cp/<run>/<phase>`) is gone, for a test that waits
/// while the run works: `false` also while git cannot list the branches, which happens while
/// the run removes a worktree (`git branch` reads every worktree's `HEAD`: "Invalid path
/// '.git/worktrees/<phase>'").
pub fn phase_branch_gone(dir: &Path, phase: &str) -> bool {
    let out = std::process::Command::new("git")
        .args(["branch", "--list", "cp/*"])
        .current_dir(dir)
        .output();
    out.is_ok_and(|out| {
        out.status.success() && !String::from_utf8_lossy(&out.stdout).contains(&format!("/{phase}"))
    })
}

/// No worktree, phase branch or worktree directory is left; `shown` goes into the failure.
pub fn assert_nothing_left(dir: &Path, shown: &str) {
    let worktrees = git(dir, &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}\n{shown}");
    assert_eq!(git(dir, &["branch", "--list", "cp/*"]), "", "{shown}");
    let trees = dir.join(".context-pilot/worktrees");
    assert!(
        !trees.exists() || std::fs::read_dir(&trees).unwrap().next().is_none(),
        "worktree directories left in {}\n{shown}",
        trees.display()
    );
}

/// The run left the tree as it was: no change at all, its own record included (kept out of
/// `git status`, issue 37); `shown` goes into the failure.
pub fn assert_clean(dir: &Path, shown: &str) {
    let status = git(dir, &["status", "--porcelain"]);
    assert_eq!(status, "", "{shown}");
}

/// How a run of [`CLASH`] ends: its output (`shown`) names the conflicting merge (right's),
/// the other phase and the file; left's work is merged; the tree is clean with no merge in
/// progress; right's branch is kept for a merge by hand.
pub fn assert_clash_stopped(dir: &Path, shown: &str) {
    assert!(
        shown.contains("merging phase 'right'")
            && shown.contains("phase 'left'")
            && shown.contains("shared.txt"),
        "{shown}"
    );
    assert_clean(dir, shown);
    assert!(!dir.join(".git/MERGE_HEAD").exists(), "{shown}");
    assert_eq!(
        std::fs::read_to_string(dir.join("shared.txt")).unwrap(),
        "from left\n",
        "{shown}"
    );
    assert!(
        git(dir, &["branch", "--list", "cp/*"]).contains("/right"),
        "{shown}"
    );
}

/// No worktree is left locked, and git's own locks are gone.
pub fn assert_no_worktree_locked(dir: &Path) {
    let git_dir = dir.join(".git");
    for tree in std::fs::read_dir(git_dir.join("worktrees"))
        .unwrap()
        .flatten()
    {
        assert!(
            !tree.path().join("locked").exists(),
            "{}",
            tree.path().display()
        );
        assert!(
            !tree.path().join("index.lock").exists(),
            "{}",
            tree.path().display()
        );
    }
    assert!(!git_dir.join("index.lock").exists());
}
