//! The table of hook events by agent version in `docs/guide/agent-clis.md`, written from the
//! agent descriptors (`AgentSpec::hook_events`) that `init` and `context-pilot hook` use, so
//! the guide cannot drift from the wiring: a test fails when the checked-in table differs.
//!
//! The table is the text between [`BEGIN`] and [`END`]; the guide around it is written by hand.
//! To write it again: `CP_UPDATE_REFERENCE=1 cargo test -p context-pilot reference`.

use std::fmt::Write as _;

use cp_agent_cli::{AGENT_CLIS, AgentSpec, HookEventSpec, HookMatcher, Version};

/// The guide that holds the table, relative to the repository root.
pub const AGENT_GUIDE: &str = "docs/guide/agent-clis.md";
/// The line before the generated table.
pub const BEGIN: &str =
    "<!-- hook-events: written by `cargo test -p context-pilot reference` from the descriptors -->";
/// The line after it.
pub const END: &str = "<!-- end of hook-events -->";
/// Where the guide's lines are wrapped.
const WIDTH: usize = 100;

fn version(v: Version) -> String {
    format!("{}.{}.{}", v.0, v.1, v.2)
}

/// Which versions wire `event`, e.g. "from 2.1.118", "before 2.1.118", "every supported version".
fn versions(event: &HookEventSpec) -> String {
    match (event.since, event.until) {
        (None, None) => "every supported version".to_owned(),
        (Some(since), None) => format!("from {}", version(since)),
        (None, Some(until)) => format!("before {}", version(until)),
        (Some(since), Some(until)) => format!("{} up to {}", version(since), version(until)),
    }
}

fn matcher(spec: &AgentSpec, event: &HookEventSpec) -> String {
    match event.matcher {
        HookMatcher::All => "every firing".to_owned(),
        HookMatcher::EditTools | HookMatcher::Exact(_) => spec
            .matcher_of(event)
            .map_or_else(String::new, |m| format!("`{m}`")),
    }
}

/// One section per agent: its oldest supported version, then a list of its hook events, each
/// with the command the hook runs, what it does, which firings run it and in which versions.
pub fn hook_events_table() -> String {
    let mut out = format!("{BEGIN}\n");
    for agent in AGENT_CLIS {
        let spec = agent.spec();
        let _ = write!(
            out,
            "\n{} (`{}`, {} or newer):\n\n",
            spec.display_name,
            spec.program,
            version(spec.min_version)
        );
        for event in spec.hook_events {
            let what = format!(
                "`{}` → `context-pilot hook {}`: {}",
                event.name,
                event.cli_name,
                event.kind.does()
            );
            let when = format!(
                "runs on: {}; wired: {}",
                matcher(spec, event),
                versions(event)
            );
            wrap_item(&mut out, "- ", &what);
            wrap_item(&mut out, "  - ", &when);
        }
        if let Some(file) = cp_setup::plugins::hooks_file(spec.name) {
            wrap_item(&mut out, "- ", &plugin_line(*agent, &file));
        }
    }
    out.push('\n');
    out.push_str(END);
    out
}

/// What Context Pilot's plugin for `agent` (its hooks in `file`) carries, by release: the
/// generator ([`cp_setup::plugins::plugin_coverage`]) puts the newest release's events in it.
fn plugin_line(agent: &dyn cp_agent_cli::AgentCli, file: &str) -> String {
    let spec = agent.spec();
    let coverage = cp_setup::plugins::plugin_coverage(agent);
    let carried: Vec<String> = coverage
        .carried
        .iter()
        .map(|(event, since)| match since {
            Some(since) => format!("`{}` (sent from {})", event.name, version(*since)),
            None => format!("`{}`", event.name),
        })
        .collect();
    // Gemini CLI calls its plugins extensions.
    let kind = if spec.name == "gemini" {
        "extension"
    } else {
        "plugin"
    };
    let mut line = format!(
        "The {kind} (`{file}`) holds one set of hooks for every release, the newest's: {}",
        carried.join(", ")
    );
    if coverage.left_out.is_empty() {
        let _ = write!(
            line,
            "; every supported release gets through it what `init {}` wires",
            spec.name
        );
    }
    for (event, until) in &coverage.left_out {
        let _ = write!(
            line,
            "; `{}` is left out, so through the {kind} {} before {} does not {}: wire such a \
             release with `context-pilot init {}`",
            event.name,
            spec.display_name,
            version(*until),
            event.kind.does(),
            spec.name
        );
    }
    line.push('.');
    line
}

/// Writes `text` as a list item after `bullet`, wrapped at [`WIDTH`] columns, each further
/// line indented under the item's first word (the guide's prose is wrapped, and a test checks).
fn wrap_item(out: &mut String, bullet: &str, text: &str) {
    let indent = " ".repeat(bullet.chars().count());
    let mut line = bullet.to_owned();
    let mut empty = true;
    for word in text.split(' ') {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line.clone_from(&indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}

/// `page` with the text between its markers replaced by `table`, or `None` when the page has
/// no markers (or has them in the wrong order).
pub fn with_table(page: &str, table: &str) -> Option<String> {
    let start = page.find(BEGIN)?;
    let end = page[start..].find(END)? + start + END.len();
    Some(format!("{}{table}{}", &page[..start], &page[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_agent_hook_events_table_is_current() {
        let path = format!("{}/../../{AGENT_GUIDE}", env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(&path).unwrap_or_default();
        let expected = with_table(&page, &hook_events_table()).unwrap_or_else(|| {
            panic!("{AGENT_GUIDE} lost its hook-events markers:\n{BEGIN}\n{END}")
        });
        crate::reference_page::check(AGENT_GUIDE, &expected);
    }

    #[test]
    fn every_agent_and_every_event_of_its_descriptor_is_listed() {
        let table = hook_events_table();
        for agent in AGENT_CLIS {
            let spec = agent.spec();
            assert!(table.contains(spec.display_name), "{table}");
            for event in spec.hook_events {
                let line = format!("`{}` → `context-pilot hook {}`", event.name, event.cli_name);
                assert!(table.contains(&line), "{line} missing:\n{table}");
            }
        }
    }

    #[test]
    fn a_long_item_wraps_under_its_first_word() {
        let mut out = String::new();
        let text = "word ".repeat(60);
        wrap_item(&mut out, "  - ", text.trim_end());
        assert!(out.lines().count() > 2, "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with("    word")),
            "{out}"
        );
        assert_eq!(out.matches("word").count(), 60);
    }

    #[test]
    fn versions_say_where_an_event_starts_and_ends() {
        let event = |since, until| HookEventSpec {
            cli_name: "x",
            name: "X",
            kind: cp_agent_cli::EventKind::Stop,
            matcher: HookMatcher::All,
            since,
            until,
        };
        assert_eq!(versions(&event(None, None)), "every supported version");
        assert_eq!(versions(&event(Some((2, 1, 118)), None)), "from 2.1.118");
        assert_eq!(versions(&event(None, Some((2, 1, 118)))), "before 2.1.118");
        assert_eq!(
            versions(&event(Some((1, 0, 0)), Some((2, 0, 0)))),
            "1.0.0 up to 2.0.0"
        );
    }
}
