//! The end-to-end tests of the `context-pilot` binary, one module per front-end or feature, in
//! one test binary (linked once). The tests that drive the real agent CLIs are in `agents/`,
//! which `scripts/test.sh` runs as an unprivileged user.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a step that fails fails the test loudly"
)]

#[path = "../util/mod.rs"]
mod util;

mod agent_loop;
mod base_verdict;
mod completions;
mod config_safety;
mod crate_map;
mod doctor;
mod esc_cancel;
mod git_identity;
mod hooks;
mod hooks_background;
mod init;
mod mcp_client;
mod mcp_files;
mod mcp_protocol;
mod mcp_search;
mod models;
mod orphan_stop;
mod plugin_wiring;
mod private_modes;
mod reload;
mod remote_hosts;
mod remote_phases;
mod terminal_tmux;
mod trust;
mod tui_changes;
mod tui_console_scroll;
mod tui_long_day;
mod tui_mouse_editor;
mod tui_palette;
mod warm_hooks;
mod warm_tui;
mod workflow_headless;
mod workflow_merge_queue;
mod workflow_parallel;
mod workflow_parallel_stop;
mod workflow_parallel_tui;
