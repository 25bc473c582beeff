//! A place's own clone of a project: `$XDG_DATA_HOME/context-pilot/remote/<key>` (else
//! `~/.local/share/context-pilot/remote/<key>`), owned by the place's user. The run names the
//! project by a key (its folder's name and a hash of where it lives), never by a path on the
//! other machine, so what arrives cannot point outside that folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::RemoteError;

/// The key a run gives the project at `root` on other places: `<folder>-<12 hex>`.
pub fn project_key(root: &Path) -> String {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let folder: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hex = hash.iter().take(6).fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    });
    format!("{}-{hex}", folder.trim_start_matches(['-', '_']))
}

/// `key` as a place receives it (`git push host:key` or `ssh://host/key`), checked: letters,
/// digits, `-` and `_` only, so it names a folder inside the clones' folder and nothing else.
pub fn checked_key(raw: &str) -> Result<String, RemoteError> {
    let key = raw.trim_matches('\'').trim_start_matches('/');
    let key = key.strip_suffix(".git").unwrap_or(key);
    let valid = !key.is_empty()
        && key.len() <= 64
        && !key.starts_with('-')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(key.to_owned())
    } else {
        Err(RemoteError::Serve(format!(
            "`{raw}` is not a project key (letters, digits, '-' and '_'); the run sends one"
        )))
    }
}

/// The folder holding this user's clones.
pub fn clones_dir() -> Result<PathBuf, RemoteError> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_DATA_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".local/share")))
        .map(|d| d.join("context-pilot/remote"))
        .ok_or_else(|| {
            RemoteError::Serve(
                "no place for the project's clone: neither XDG_DATA_HOME nor HOME is set".into(),
            )
        })
}

/// The clone of project `key`, made (an empty repository) when missing.
pub fn prepare_clone(key: &str) -> Result<PathBuf, RemoteError> {
    let key = checked_key(key)?;
    let dir = clones_dir()?;
    let clone = dir.join(&key);
    if clone.join(".git").is_dir() {
        return Ok(clone);
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| RemoteError::Serve(format!("cannot make {}: {e}", dir.display())))?;
    // Made aside and renamed in, so two pushes at once never see half a repository.
    let aside = dir.join(format!(".{key}.{}", std::process::id()));
    git(&aside, &["init", "--quiet", "."], true)?;
    if std::fs::rename(&aside, &clone).is_err() {
        let _ = std::fs::remove_dir_all(&aside);
    }
    if clone.join(".git").is_dir() {
        Ok(clone)
    } else {
        Err(RemoteError::Serve(format!(
            "cannot make the project's clone at {}",
            clone.display()
        )))
    }
}

/// Runs git in `dir` (made first when `make`), returning its trimmed output.
pub(crate) fn git(dir: &Path, args: &[&str], make: bool) -> Result<String, RemoteError> {
    if make {
        std::fs::create_dir_all(dir)
            .map_err(|e| RemoteError::Serve(format!("cannot make {}: {e}", dir.display())))?;
    }
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| no_git(&e))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(RemoteError::Serve(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// The error of git that cannot be started here: most often, it is not installed.
pub(crate) fn no_git(e: &std::io::Error) -> RemoteError {
    if e.kind() == std::io::ErrorKind::NotFound {
        RemoteError::NoGit {
            host: crate::machine::host_name(),
            detail: "`git` is not found".into(),
        }
    } else {
        RemoteError::Serve(format!("cannot run git here: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_a_folder_and_nothing_else() {
        assert_eq!(checked_key("'/proj-1a2b.git'").unwrap(), "proj-1a2b");
        for bad in ["../x", "a/b", "", "-x", "a b", "~/x"] {
            assert!(checked_key(bad).is_err(), "{bad}");
        }
        let key = project_key(Path::new("/tmp/my project"));
        assert!(checked_key(&key).is_ok(), "{key}");
        assert!(key.starts_with("my_project-"), "{key}");
    }
}
