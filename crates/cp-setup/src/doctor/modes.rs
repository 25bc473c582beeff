//! The modes of `.context-pilot/run`, `logs` and `state`: console output, sockets and session
//! state are for this user only (0700; see `cp_base::private`).

use std::os::unix::fs::PermissionsExt;

use cp_base::Project;
use cp_base::private::{PRIVATE_DIR_MODE, PRIVATE_DIRS};

use super::Check;

const GROUP: &str = "modes";

pub(super) fn checks(project: &Project) -> Vec<Check> {
    PRIVATE_DIRS
        .iter()
        .map(|name| {
            let dir = project.dir().join(name);
            let shown = format!(".context-pilot/{name}/");
            match std::fs::metadata(&dir) {
                Err(_) => Check::ok(GROUP, format!("{shown}: not created yet")),
                Ok(meta) => {
                    let mode = meta.permissions().mode() & 0o777;
                    if mode == PRIVATE_DIR_MODE {
                        Check::ok(GROUP, format!("{shown}: mode {mode:o}"))
                    } else {
                        Check::fail(
                            GROUP,
                            format!(
                                "{shown}: mode {mode:o}, not {PRIVATE_DIR_MODE:o}: other users may read it"
                            ),
                            format!(
                                "`chmod -R go-rwx {}` (or start context-pilot once: it fixes them)",
                                dir.display()
                            ),
                        )
                    }
                }
            }
        })
        .collect()
}
