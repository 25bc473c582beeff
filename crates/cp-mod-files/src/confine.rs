//! Resolving a user-given path to a file inside the project root, and nowhere else.
//!
//! A path is accepted when, after `..` is applied and every existing symlink is followed, it
//! still lies under the root. This rejects `../x`, absolute paths elsewhere, and symlinks that
//! point out of the project, while allowing files that do not exist yet.
//!
//! This check gives the clear error messages and the project-relative name; it is not what
//! keeps the tools inside the project. Every file operation then goes through a handle on the
//! root that resolves beneath it in one step (see [`super::beneath`]), so a path swapped for a
//! symlink between this check and the operation cannot lead outside.

use std::path::{Component, Path, PathBuf};

use super::error::{FileError, refused};

/// A path the tools may touch: absolute, and its project-relative form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedPath {
    pub absolute: PathBuf,
    /// Relative to the root, with `/` separators.
    pub relative: String,
}

/// Resolves `input` (absolute, or relative to `root`) inside `root` (canonical), following
/// every symlink, the last component's too.
pub fn confine(root: &Path, input: &str, tool: &str) -> Result<ConfinedPath, FileError> {
    resolve(root, input, tool, true)
}

/// Like [`confine`], but a symlink in the last component is kept as is: the path names the
/// link itself (what deleting it should remove), not its target.
pub fn confine_link(root: &Path, input: &str, tool: &str) -> Result<ConfinedPath, FileError> {
    resolve(root, input, tool, false)
}

fn resolve(
    root: &Path,
    input: &str,
    tool: &str,
    follow_last: bool,
) -> Result<ConfinedPath, FileError> {
    if input.trim().is_empty() {
        return Err(refused!(
            "{tool}: 'file_path' is empty; example: `src/main.rs`"
        ));
    }
    if input.contains('\0') {
        return Err(refused!("{tool}: 'file_path' contains a NUL byte"));
    }
    if input.ends_with('/') {
        return Err(refused!(
            "{tool}: 'file_path' `{input}` ends with '/', so it names a directory; give a file \
             path such as `{input}file.txt`"
        ));
    }
    let joined = if Path::new(input).is_absolute() {
        PathBuf::from(input)
    } else {
        root.join(input)
    };
    let outside = || {
        refused!(
            "{tool}: '{input}' is outside the project root {}; give a path inside it, e.g. `src/main.rs`",
            root.display()
        )
    };
    let lexical = normalize(&joined).ok_or_else(outside)?;
    if !lexical.starts_with(root) {
        return Err(outside());
    }
    let resolved = if follow_last {
        resolve_existing_prefix(&lexical)
    } else {
        let name = lexical.file_name().ok_or_else(outside)?.to_os_string();
        resolve_existing_prefix(lexical.parent().ok_or_else(outside)?).map(|p| p.join(name))
    }
    .ok_or_else(outside)?;
    if !resolved.starts_with(root) {
        return Err(refused!(
            "{tool}: '{input}' leads through a symlink to {}, outside the project root; \
             edit the link's target inside the project instead",
            resolved.display()
        ));
    }
    let relative = resolved
        .strip_prefix(root)
        .map_err(|_| outside())?
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if relative.is_empty() {
        return Err(refused!(
            "{tool}: '{input}' is the project root, not a file"
        ));
    }
    Ok(ConfinedPath {
        absolute: resolved,
        relative,
    })
}

/// Applies `.` and `..` lexically. `None` when `..` climbs above the filesystem root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// Follows symlinks through the longest existing prefix of `path`, keeping the rest as is.
/// A final component that is a dangling symlink is followed too, so a write cannot escape.
fn resolve_existing_prefix(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(meta) = std::fs::symlink_metadata(&existing) {
            if meta.file_type().is_symlink() && std::fs::metadata(&existing).is_err() {
                // Dangling link: resolve its target lexically.
                let target = std::fs::read_link(&existing).ok()?;
                let base = existing.parent()?.to_path_buf();
                let joined = if target.is_absolute() {
                    target
                } else {
                    base.join(target)
                };
                let mut resolved = normalize(&joined)?;
                resolved.extend(rest.iter().rev());
                return Some(resolved);
            }
            let mut resolved = std::fs::canonicalize(&existing).ok()?;
            resolved.extend(rest.iter().rev());
            return Some(resolved);
        }
        rest.push(existing.file_name()?.to_os_string());
        if !existing.pop() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
        std::fs::create_dir_all(root.join("src")).unwrap();
        (tmp, root)
    }

    #[test]
    fn accepts_relative_absolute_and_new_paths_inside() {
        let (_t, root) = root();
        assert_eq!(
            confine(&root, "src/a.rs", "T").unwrap().relative,
            "src/a.rs"
        );
        assert_eq!(
            confine(&root, "./src/../b/c.txt", "T").unwrap().relative,
            "b/c.txt"
        );
        let abs = root.join("src/x.rs");
        assert_eq!(
            confine(&root, abs.to_str().unwrap(), "T").unwrap().relative,
            "src/x.rs"
        );
    }

    #[test]
    fn rejects_escapes() {
        let (tmp, root) = root();
        for bad in ["../x", "src/../../x", "/etc/passwd", "", ".", "src/"] {
            assert!(confine(&root, bad, "T").is_err(), "{bad}");
        }
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let err = confine(&root, "link/secret.txt", "T")
            .unwrap_err()
            .to_string();
        assert!(err.contains("symlink"), "{err}");
        std::os::unix::fs::symlink(outside.join("new.txt"), root.join("dangling")).unwrap();
        assert!(confine(&root, "dangling", "T").is_err());
        // A symlink that stays inside is fine and reports the real path.
        std::os::unix::fs::symlink(root.join("src"), root.join("inner")).unwrap();
        assert_eq!(
            confine(&root, "inner/a.rs", "T").unwrap().relative,
            "src/a.rs"
        );
    }
}
