//! The files one `apply_patch` call touches, read from its patch text (`tool_input.command`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md        → docs/new.md, created
//! *** Update File: src/a.rs        → src/a.rs, modified
//! *** Move to: src/b.rs            → … unless it moves: then src/b.rs, created
//! *** Delete File: old.txt         → old.txt, deleted
//! *** End Patch
//! ```

use cp_base::ChangeKind;
use serde_json::{Map, Value};

use crate::spec::{EditArgumentsError, EditedPath};

/// The edited files of an `apply_patch` call's arguments, in patch order, each once.
pub(super) fn edited_paths(
    input: &Map<String, Value>,
) -> Result<Vec<EditedPath>, EditArgumentsError> {
    let Some(patch) = ["command", "input", "patch"]
        .iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str))
    else {
        return Err(EditArgumentsError::Missing {
            key: "command",
            expected: "the patch text of apply_patch",
        });
    };
    Ok(paths_in(patch))
}

/// The files `patch` adds, updates (under their new name when moved) and deletes.
pub(super) fn paths_in(patch: &str) -> Vec<EditedPath> {
    let mut out: Vec<EditedPath> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let found = [
            ("*** Add File: ", ChangeKind::Created),
            ("*** Update File: ", ChangeKind::Modified),
            ("*** Delete File: ", ChangeKind::Deleted),
        ]
        .into_iter()
        .find_map(|(marker, kind)| line.strip_prefix(marker).map(|p| (p.trim(), kind)));
        if let Some((path, kind)) = found {
            if !path.is_empty() {
                out.push(EditedPath {
                    path: path.to_owned(),
                    kind: Some(kind),
                });
            }
        } else if let Some(to) = line.strip_prefix("*** Move to: ").map(str::trim)
            && let Some(last) = out.last_mut()
            && last.kind == Some(ChangeKind::Modified)
            && !to.is_empty()
        {
            // The update lands under the new name.
            *last = EditedPath {
                path: to.to_owned(),
                kind: Some(ChangeKind::Created),
            };
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.path.clone()));
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn edited(path: &str, kind: ChangeKind) -> EditedPath {
        EditedPath {
            path: path.into(),
            kind: Some(kind),
        }
    }

    #[test]
    fn one_patch_names_every_file_it_adds_updates_moves_and_deletes() {
        let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Update File: src/old.rs\n*** Move to: src/new.rs\n@@\n-a\n+b\n*** Delete File: gone.txt\n*** End Patch\n";
        assert_eq!(
            paths_in(patch),
            [
                edited("docs/new.md", ChangeKind::Created),
                edited("src/a.rs", ChangeKind::Modified),
                edited("src/new.rs", ChangeKind::Created),
                edited("gone.txt", ChangeKind::Deleted),
            ]
        );
    }

    #[test]
    fn lines_inside_hunks_and_odd_patches_name_nothing_more() {
        // A `+` line that looks like a marker is content, not a header.
        let patch = "*** Begin Patch\r\n*** Update File: a.rs\r\n+*** Add File: no.rs\r\n*** Update File: a.rs\r\n*** End Patch";
        assert_eq!(paths_in(patch), [edited("a.rs", ChangeKind::Modified)]);
        assert!(paths_in("*** Begin Patch\n*** Move to: x\n*** End Patch").is_empty());
        assert!(paths_in("").is_empty());
    }

    #[test]
    fn the_patch_comes_from_the_command_argument() {
        let input = json!({"command": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"});
        let paths = edited_paths(input.as_object().unwrap()).unwrap();
        assert_eq!(paths, [edited("a", ChangeKind::Created)]);
        let err = edited_paths(json!({"cmd": 1}).as_object().unwrap()).unwrap_err();
        assert!(err.to_string().contains("'command' is missing"), "{err}");
    }
}
