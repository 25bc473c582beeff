//! The project's console server: whether one runs and answers on its socket. None running
//! is fine (the first console starts it); a socket nobody answers on is left from a server
//! that died.

use cp_base::Project;
use cp_mod_console::{ConsoleClient, RunPaths};

use super::Check;

const GROUP: &str = "console";

pub(super) fn checks(project: &Project) -> Vec<Check> {
    let paths = RunPaths::new(project.root());
    let socket = paths.socket().to_path_buf();
    if !socket.exists() {
        return vec![Check::ok(
            GROUP,
            "console server: not running (the first console starts it)",
        )];
    }
    let pid = ConsoleClient::for_project(project.root())
        .ok()
        .and_then(|client| client.server_pid());
    vec![match pid {
        Some(pid) => Check::ok(
            GROUP,
            format!(
                "console server: running (pid {pid}), answering on {}",
                socket.display()
            ),
        ),
        None => Check::fail(
            GROUP,
            format!(
                "console server: {} exists but no server answers on it",
                socket.display()
            ),
            format!(
                "remove {} (a server that died left it); the next console starts a new server",
                socket.display()
            ),
        ),
    }]
}
