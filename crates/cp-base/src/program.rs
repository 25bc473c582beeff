//! Programs and their command lines: finding a program as `execvp` would, without starting
//! it, and writing a word into a shell command line.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// Where `program` is: itself when it names a path (it holds a `/`; a relative one is left
/// relative, for the caller to resolve against the right directory), else the first
/// executable file of that name in the directories of `path_var` (a `PATH` value). `None`
/// when there is none, or when `path_var` is `None` for a bare name.
///
/// ```
/// use std::ffi::OsStr;
/// let sh = cp_base::find_program("sh", Some(OsStr::new("/bin:/usr/bin")));
/// assert!(sh.is_some_and(|p| p.ends_with("sh")));
/// assert_eq!(cp_base::find_program("./x", None), Some("./x".into()));
/// assert_eq!(cp_base::find_program("sh", Some(OsStr::new("/nonexistent"))), None);
/// ```
pub fn find_program(program: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable_file(candidate))
}

/// Whether `path` is a regular file with an execute bit.
pub fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `word` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes (with each `'` written as `'\\''`).
///
/// ```
/// assert_eq!(cp_base::shell_word("/usr/bin/context-pilot"), "/usr/bin/context-pilot");
/// assert_eq!(cp_base::shell_word("/My Tools/cp"), "'/My Tools/cp'");
/// assert_eq!(cp_base::shell_word("it's"), "'it'\\''s'");
/// ```
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%=,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
