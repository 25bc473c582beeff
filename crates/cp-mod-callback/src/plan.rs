//! Run planning: which callbacks a batch triggers, with which files, on behalf of which calls.

use std::collections::HashMap;

use cp_base::BatchChanges;

use crate::model::{CallbackDef, CallbackId, CallbackSection};
use crate::trigger::Matcher;

/// One run to start: a callback, the files it gets in `CP_CHANGED_FILES`, and the calls of
/// the batch whose edits triggered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRun {
    pub def: CallbackDef,
    /// Relative paths, sorted, without duplicates.
    pub files: Vec<String>,
    /// Indices of the triggering calls, sorted.
    pub calls: Vec<usize>,
}

/// The runs a batch triggers for `worker`, in definition order.
///
/// Created, modified and deleted files all count. `once_per_batch` callbacks get one run
/// with every matched file; the others one run per matched file.
pub fn plan(
    batch: &BatchChanges,
    section: &CallbackSection,
    matcher: &Matcher,
    worker: &str,
) -> Vec<PlannedRun> {
    // Position in `definitions` of each callback that fires for this worker.
    let firing: HashMap<CallbackId, usize> = section
        .definitions
        .iter()
        .enumerate()
        .filter(|(_, d)| section.fires_for(worker, d.id))
        .map(|(i, d)| (d.id, i))
        .collect();
    if firing.is_empty() || batch.is_empty() {
        return Vec::new();
    }
    // Unique paths, each with the (sorted) calls that changed it.
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut paths: Vec<(&str, Vec<usize>)> = Vec::new();
    for (call, change) in batch.iter() {
        let i = *index.entry(change.path.as_str()).or_insert_with(|| {
            paths.push((change.path.as_str(), Vec::new()));
            paths.len() - 1
        });
        let calls = &mut paths[i].1;
        if !calls.contains(&call) {
            calls.push(call);
        }
    }
    let hits = matcher.match_all(paths.iter().map(|(p, _)| *p));
    // Per definition: indices into `paths` of the files it matched.
    let mut per_def: Vec<Vec<usize>> = vec![Vec::new(); section.definitions.len()];
    for (path_index, ids) in hits.iter().enumerate() {
        for id in ids {
            if let Some(&def_index) = firing.get(id) {
                per_def[def_index].push(path_index);
            }
        }
    }
    let mut runs = Vec::new();
    for (def, mut files) in section.definitions.iter().zip(per_def) {
        if files.is_empty() {
            continue;
        }
        files.sort_unstable_by_key(|&i| paths[i].0);
        if def.once_per_batch {
            let mut calls: Vec<usize> = files
                .iter()
                .flat_map(|&i| paths[i].1.iter().copied())
                .collect();
            calls.sort_unstable();
            calls.dedup();
            runs.push(PlannedRun {
                def: def.clone(),
                files: files.iter().map(|&i| paths[i].0.to_owned()).collect(),
                calls,
            });
        } else {
            for i in files {
                let (path, calls) = &paths[i];
                let mut calls = calls.clone();
                calls.sort_unstable();
                runs.push(PlannedRun {
                    def: def.clone(),
                    files: vec![(*path).to_owned()],
                    calls,
                });
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use cp_base::{CallChanges, ChangeKind, FileChange};

    use super::*;

    fn def(id: u64, pattern: &str, once: bool) -> CallbackDef {
        CallbackDef {
            id: CallbackId(id),
            name: format!("cb{id}"),
            description: String::new(),
            pattern: vec![pattern.to_owned()],
            blocking: false,
            timeout: None,
            success_message: None,
            cwd: None,
            one_at_a_time: false,
            once_per_batch: once,
        }
    }

    fn batch(calls: &[&[(&str, ChangeKind)]]) -> BatchChanges {
        BatchChanges {
            calls: calls
                .iter()
                .enumerate()
                .map(|(i, changes)| CallChanges {
                    call_index: i,
                    tool: "File_edit".into(),
                    label: format!("call {i}"),
                    changes: changes
                        .iter()
                        .map(|(p, k)| FileChange::new(*p, *k))
                        .collect(),
                })
                .collect(),
        }
    }

    fn setup(defs: Vec<CallbackDef>, active: &[u64]) -> (CallbackSection, Matcher) {
        let mut s = CallbackSection {
            definitions: defs,
            ..CallbackSection::default()
        };
        for id in active {
            s.set_active("main", CallbackId(*id), true);
        }
        let m = Matcher::new(s.definitions.iter().map(|d| (d.id, d.pattern.as_slice())));
        (s, m)
    }

    #[test]
    fn once_per_batch_gets_every_file_and_every_call() {
        let (s, m) = setup(vec![def(1, "*.rs", true)], &[1]);
        let b = batch(&[
            &[
                ("a.rs", ChangeKind::Modified),
                ("x.md", ChangeKind::Modified),
            ],
            &[("src/b.rs", ChangeKind::Created)],
            &[
                ("c.rs", ChangeKind::Deleted),
                ("a.rs", ChangeKind::Modified),
            ],
        ]);
        let runs = plan(&b, &s, &m, "main");
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].files, vec!["a.rs", "c.rs", "src/b.rs"]);
        assert_eq!(runs[0].calls, vec![0, 1, 2]);
    }

    #[test]
    fn per_file_callbacks_get_one_run_per_file() {
        let (s, m) = setup(vec![def(1, "*.rs", false)], &[1]);
        let b = batch(&[
            &[("a.rs", ChangeKind::Modified)],
            &[
                ("b.rs", ChangeKind::Modified),
                ("a.rs", ChangeKind::Modified),
            ],
        ]);
        let runs = plan(&b, &s, &m, "main");
        let got: Vec<_> = runs
            .iter()
            .map(|r| (r.files.clone(), r.calls.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (vec!["a.rs".to_owned()], vec![0, 1]),
                (vec!["b.rs".to_owned()], vec![1])
            ]
        );
    }

    #[test]
    fn only_active_callbacks_of_this_worker_fire() {
        let (mut s, m) = setup(vec![def(1, "*.rs", true), def(2, "*.rs", true)], &[2]);
        let b = batch(&[&[("a.rs", ChangeKind::Modified)]]);
        let runs = plan(&b, &s, &m, "main");
        assert_eq!(
            runs.iter().map(|r| r.def.id).collect::<Vec<_>>(),
            vec![CallbackId(2)]
        );
        assert!(plan(&b, &s, &m, "other").is_empty());
        s.paused.insert("main".into());
        assert!(plan(&b, &s, &m, "main").is_empty());
    }
}
