//! The crate map in `ARCHITECTURE.md`, written from `cargo metadata`, so the drawing cannot
//! drift from the manifests: a test fails when an edge is added to (or removed from) a
//! `Cargo.toml` and the map was not written again.
//!
//! The map is the text between [`BEGIN`] and [`END`] in `ARCHITECTURE.md`; the prose around
//! it is written by hand. To write the map again after changing a dependency:
//! `CP_UPDATE_REFERENCE=1 cargo test -p context-pilot reference`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::Command;

/// The page that holds the map, relative to the repository root.
pub const ARCHITECTURE_PAGE: &str = "ARCHITECTURE.md";
/// The line before the generated map.
pub const BEGIN: &str = "<!-- crate-map: written by `cargo test -p context-pilot reference` -->";
/// The line after it.
pub const END: &str = "<!-- end of crate-map -->";
/// Where a line of dependencies is wrapped.
const WIDTH: usize = 100;

/// Each workspace crate and the workspace crates it depends on for its build (normal and
/// build dependencies; a crate's tests may use more, and those are not drawn).
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// The edges `cargo metadata` reports for the workspace this crate belongs to.
///
/// # Panics
/// When cargo cannot be run or answers with something else than its metadata (a test's
/// failure, with cargo's own words).
#[expect(clippy::panic, reason = "a test's failure message")]
pub fn workspace_edges() -> Edges {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cargo metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("cargo metadata printed no JSON: {e}"));
    edges_of(&metadata)
}

/// The edges between the packages of `metadata` (the JSON of `cargo metadata --no-deps`).
fn edges_of(metadata: &serde_json::Value) -> Edges {
    let packages = metadata["packages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut edges = Edges::new();
    for package in packages {
        let Some(name) = package["name"].as_str() else {
            continue;
        };
        let deps = package["dependencies"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            // `kind` is null for a normal dependency, "dev" or "build" otherwise.
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str())
            .filter(|dep| members.contains(dep) && *dep != name)
            .map(str::to_owned)
            .collect();
        edges.insert(name.to_owned(), deps);
    }
    edges
}

/// How far each crate stands above the crates that depend on nothing: 0 for those, one more
/// than its highest dependency otherwise. The map lists the highest first, so every arrow
/// points down the page.
fn heights(edges: &Edges) -> BTreeMap<&str, usize> {
    fn height<'a>(
        name: &'a str,
        edges: &'a Edges,
        seen: &mut BTreeMap<&'a str, usize>,
        path: &mut BTreeSet<&'a str>,
    ) -> usize {
        if let Some(&h) = seen.get(name) {
            return h;
        }
        // Cargo refuses dependency cycles; the guard only keeps a broken input finite.
        if !path.insert(name) {
            return 0;
        }
        let h = edges.get(name).map_or(0, |deps| {
            deps.iter()
                .map(|dep| height(dep, edges, seen, path) + 1)
                .max()
                .unwrap_or(0)
        });
        path.remove(name);
        seen.insert(name, h);
        h
    }
    let mut seen = BTreeMap::new();
    for name in edges.keys() {
        height(name, edges, &mut seen, &mut BTreeSet::new());
    }
    seen
}

/// The map: one line a crate, highest first, each with the workspace crates it depends on.
pub fn crate_map(edges: &Edges) -> String {
    let heights = heights(edges);
    let order = |a: &&str, b: &&str| heights[b].cmp(&heights[a]).then(a.cmp(b));
    let mut names: Vec<&str> = edges.keys().map(String::as_str).collect();
    names.sort_by(order);
    let column = names.iter().map(|n| n.len()).max().unwrap_or(0) + 2;
    let mut out = format!("{BEGIN}\n\n```text\n");
    for name in names {
        let mut deps: Vec<&str> = edges[name].iter().map(String::as_str).collect();
        deps.sort_by(order);
        let mut line = format!("{name:<column$}");
        if deps.is_empty() {
            line.push_str("(no workspace crate)");
        } else {
            line.push_str("──→ ");
            for (i, dep) in deps.iter().enumerate() {
                let piece = if i + 1 < deps.len() {
                    format!("{dep}, ")
                } else {
                    (*dep).to_owned()
                };
                if line.chars().count() + piece.trim_end().len() > WIDTH {
                    let _ = writeln!(out, "{}", line.trim_end());
                    line = " ".repeat(column + 4);
                }
                line.push_str(&piece);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push_str("```\n\n");
    out.push_str(END);
    out
}

/// `page` with the text between its markers replaced by `map`, or `None` when the page has no
/// markers (or has them in the wrong order).
pub fn with_map(page: &str, map: &str) -> Option<String> {
    let start = page.find(BEGIN)?;
    let end = page[start..].find(END)? + start + END.len();
    Some(format!("{}{map}{}", &page[..start], &page[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(list: &[(&str, &[&str])]) -> Edges {
        list.iter()
            .map(|(name, deps)| {
                (
                    (*name).to_owned(),
                    deps.iter().map(|d| (*d).to_owned()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn reference_architecture_crate_map_is_current() {
        let path = format!("{}/../../{ARCHITECTURE_PAGE}", env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(&path).unwrap_or_default();
        let expected = with_map(&page, &crate_map(&workspace_edges())).unwrap_or_else(|| {
            panic!("{ARCHITECTURE_PAGE} lost its crate-map markers:\n{BEGIN}\n{END}")
        });
        crate::reference_page::check(ARCHITECTURE_PAGE, &expected);
    }

    #[test]
    fn every_arrow_points_down_the_page() {
        let map = crate_map(&edges(&[
            ("base", &[]),
            ("top", &["mid", "base"]),
            ("mid", &["base"]),
        ]));
        let lines: Vec<&str> = map
            .lines()
            .filter(|l| l.contains("──→") || l.contains("(no"))
            .collect();
        assert_eq!(
            lines,
            [
                "top   ──→ mid, base",
                "mid   ──→ base",
                "base  (no workspace crate)"
            ]
        );
    }

    #[test]
    fn a_long_list_of_dependencies_wraps_under_the_first() {
        let many: Vec<String> = (0..20).map(|i| format!("crate-number-{i:02}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut list: Vec<(&str, &[&str])> = vec![("top", &many)];
        list.extend(many.iter().map(|m| (*m, &[][..])));
        let map = crate_map(&edges(&list));
        assert!(map.lines().all(|l| l.chars().count() <= WIDTH), "{map}");
        let top: Vec<&str> = map
            .lines()
            .skip_while(|l| !l.starts_with("top"))
            .take_while(|l| l.starts_with("top") || l.starts_with(' '))
            .collect();
        assert!(top.len() > 1, "{map}");
        assert!(
            top[1..].iter().all(|l| l.starts_with(&" ".repeat(18))),
            "{map}"
        );
        let named: usize = top.iter().map(|l| l.matches("crate-number-").count()).sum();
        assert_eq!(named, 20);
    }

    #[test]
    fn the_map_replaces_only_the_text_between_its_markers() {
        let page = format!("before\n{BEGIN}\nold map\n{END}\nafter\n");
        assert_eq!(
            with_map(&page, "NEW").as_deref(),
            Some("before\nNEW\nafter\n")
        );
        assert_eq!(with_map("no markers", "NEW"), None);
        assert_eq!(with_map(&format!("{END}\n{BEGIN}"), "NEW"), None);
    }

    #[test]
    fn dev_dependencies_and_outside_crates_are_not_edges() {
        let metadata = serde_json::json!({"packages": [
            {"name": "a", "dependencies": [
                {"name": "b", "kind": null},
                {"name": "c", "kind": "dev"},
                {"name": "serde", "kind": null},
                {"name": "d", "kind": "build"}
            ]},
            {"name": "b", "dependencies": []},
            {"name": "c", "dependencies": []},
            {"name": "d", "dependencies": []}
        ]});
        let edges = edges_of(&metadata);
        assert_eq!(
            edges["a"].iter().map(String::as_str).collect::<Vec<_>>(),
            ["b", "d"]
        );
    }
}
