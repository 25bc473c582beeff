//! What a detector may look at: a directory's files and the tools on the `PATH` the tests
//! will run with.

use std::ffi::OsStr;
use std::path::Path;

/// What a detector may look at: the directory and the `PATH` the command will run with.
pub(super) struct Probe<'a> {
    pub(super) dir: &'a Path,
    path_env: Option<&'a OsStr>,
}

impl<'a> Probe<'a> {
    /// A probe of `dir`; `path_env` replaces `PATH` when looking for tools.
    pub(super) fn new(dir: &'a Path, path_env: Option<&'a OsStr>) -> Self {
        Self { dir, path_env }
    }

    pub(super) fn has_file(&self, name: &str) -> bool {
        self.dir.join(name).is_file()
    }

    pub(super) fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    /// Whether `program` is an executable file on the `PATH` the tests will run with.
    pub(super) fn on_path(&self, program: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let path = match self.path_env {
            Some(path) => path.to_owned(),
            None => std::env::var_os("PATH").unwrap_or_default(),
        };
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    }
}
