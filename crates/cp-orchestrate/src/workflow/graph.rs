//! Which phases wait for which: a phase's `depends_on`, or, without one, the phase listed
//! above it (so a file without `depends_on` is the plain sequence it always was). The graph
//! is checked when the file loads (unknown ids, cycles), and gives the order phases run in.

/// What the graph needs of a phase: its id and its `depends_on`.
pub(crate) struct Node<'a> {
    pub(crate) id: &'a str,
    pub(crate) depends_on: Option<&'a [String]>,
}

/// Why a phase's `depends_on` cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GraphProblem {
    /// `phase` waits for an id no phase has.
    UnknownPhase { phase: String, missing: String },
    /// The phases wait for each other in a circle (the first one repeated at the end).
    Cycle(Vec<String>),
}

impl GraphProblem {
    /// The phase to name in the error.
    pub(crate) fn phase(&self) -> &str {
        match self {
            Self::UnknownPhase { phase, .. } => phase,
            Self::Cycle(cycle) => cycle.first().map_or("", String::as_str),
        }
    }

    /// What is wrong and how to fix it; `ids` lists the workflow's phases.
    pub(crate) fn message(&self, ids: &[&str]) -> String {
        match self {
            Self::UnknownPhase { missing, .. } => format!(
                "depends_on names '{missing}', which is not a phase of this workflow; use one of {}",
                ids.join(", ")
            ),
            Self::Cycle(cycle) => format!(
                "depends_on forms a cycle: {}; a phase cannot wait for itself, so remove one of \
                 these dependencies",
                cycle.join(" → ")
            ),
        }
    }
}

/// For each phase (by index), the indexes of the phases it waits for.
pub(crate) fn dependencies(phases: &[Node<'_>]) -> Result<Vec<Vec<usize>>, GraphProblem> {
    let index_of = |id: &str| phases.iter().position(|p| p.id == id);
    phases
        .iter()
        .enumerate()
        .map(|(index, phase)| match phase.depends_on {
            None => Ok(index.checked_sub(1).into_iter().collect()),
            Some(ids) => {
                let mut deps = Vec::new();
                for id in ids {
                    let found = index_of(id).ok_or_else(|| GraphProblem::UnknownPhase {
                        phase: phase.id.to_owned(),
                        missing: id.clone(),
                    })?;
                    if !deps.contains(&found) {
                        deps.push(found);
                    }
                }
                Ok(deps)
            }
        })
        .collect()
}

/// The order to run the phases in one at a time: each after everything it waits for, and
/// among the phases ready at once, the one listed first. A cycle is an error naming it.
pub(crate) fn run_order(phases: &[Node<'_>]) -> Result<Vec<usize>, GraphProblem> {
    let deps = dependencies(phases)?;
    let mut done = vec![false; phases.len()];
    let mut order = Vec::with_capacity(phases.len());
    while order.len() < phases.len() {
        let Some(next) = (0..phases.len()).find(|&i| !done[i] && deps[i].iter().all(|&d| done[d]))
        else {
            return Err(GraphProblem::Cycle(cycle(&deps, &done, phases)));
        };
        done[next] = true;
        order.push(next);
    }
    Ok(order)
}

/// A cycle among the phases not yet `done` (each of which waits for another such phase).
fn cycle(deps: &[Vec<usize>], done: &[bool], phases: &[Node<'_>]) -> Vec<String> {
    let waiting = |i: usize| deps[i].iter().copied().find(|&d| !done[d]);
    let Some(start) = (0..deps.len()).find(|&i| !done[i]) else {
        return Vec::new();
    };
    // Follow "waits for" until a phase repeats; the path from its first visit is the cycle.
    let mut path = vec![start];
    let mut at = start;
    while let Some(next) = waiting(at) {
        if let Some(first) = path.iter().position(|&p| p == next) {
            let mut names: Vec<String> = path[first..]
                .iter()
                .map(|&i| phases[i].id.to_owned())
                .collect();
            names.push(phases[next].id.to_owned());
            return names;
        }
        path.push(next);
        at = next;
    }
    Vec::new()
}

#[cfg(test)]
mod tests {

    use super::*;

    /// A phase's id and `depends_on`, owned, for [`nodes`].
    fn phase(id: &str, depends_on: Option<&[&str]>) -> (String, Option<Vec<String>>) {
        (
            id.to_owned(),
            depends_on.map(|ids| ids.iter().map(|s| (*s).to_owned()).collect()),
        )
    }

    fn nodes(phases: &[(String, Option<Vec<String>>)]) -> Vec<Node<'_>> {
        phases
            .iter()
            .map(|(id, deps)| Node {
                id,
                depends_on: deps.as_deref(),
            })
            .collect()
    }

    fn ids(phases: &[(String, Option<Vec<String>>)], order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| phases[i].0.clone()).collect()
    }

    #[test]
    fn without_depends_on_each_phase_waits_for_the_one_above() {
        let phases = [phase("a", None), phase("b", None), phase("c", None)];
        assert_eq!(
            dependencies(&nodes(&phases)).unwrap(),
            [vec![], vec![0], vec![1]]
        );
        assert_eq!(
            ids(&phases, &run_order(&nodes(&phases)).unwrap()),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn the_order_follows_the_dependencies_and_then_the_file() {
        let phases = [
            phase("integrate", Some(&["api", "ui"])),
            phase("plan", Some(&[])),
            phase("api", Some(&["plan"])),
            phase("ui", Some(&["plan", "plan"])),
        ];
        assert_eq!(
            ids(&phases, &run_order(&nodes(&phases)).unwrap()),
            ["plan", "api", "ui", "integrate"]
        );
        assert_eq!(
            dependencies(&nodes(&phases)).unwrap()[3],
            [1],
            "named twice, waited for once"
        );
    }

    #[test]
    fn unknown_ids_and_cycles_are_named() {
        let phases = [phase("a", None), phase("b", Some(&["zz"]))];
        let problem = run_order(&nodes(&phases)).unwrap_err();
        assert_eq!(problem.phase(), "b");
        assert!(problem.message(&["a", "b"]).contains("'zz'"));

        let phases = [
            phase("a", Some(&[])),
            phase("b", Some(&["d"])),
            phase("c", Some(&["b"])),
            phase("d", Some(&["c"])),
        ];
        let problem = run_order(&nodes(&phases)).unwrap_err();
        assert_eq!(
            problem,
            GraphProblem::Cycle(vec!["b".into(), "d".into(), "c".into(), "b".into()])
        );
        assert!(problem.message(&[]).contains("b → d → c → b"));

        let itself = [phase("a", Some(&["a"]))];
        assert_eq!(
            run_order(&nodes(&itself)).unwrap_err(),
            GraphProblem::Cycle(vec!["a".into(), "a".into()])
        );
    }
}
