//! # No file-level import circles
//!
//! Inside each crate, imports point one way: the file that orchestrates imports the files that
//! do one thing, never the reverse. This test builds each crate's file-level import graph from
//! its `src/` and fails on every circle, naming its files and the lines that close it.
//!
//! An edge runs from a file to the file that defines what it names: through `use` (grouped trees,
//! `self`, `super`, globs, renames), through paths in code (`crate::a::f()`, `super::T`), and
//! through re-exports, which are followed to the defining file, so a hub that re-exports (a
//! `lib.rs` or a `mod.rs`) is not itself a stop on the way. A `pub use` leads from the file
//! that writes it only where that file's own code names the item; a `mod x;` declaration is no
//! edge. A name that leads to a module (`use crate::a;`) leads to that module's file.
//!
//! A file's ancestors in the module tree (its parent module's file, up to the crate root) are
//! its namespace, not its peers: a submodule sees even their private items, so naming what they
//! define is no edge. A parent's use of its children is one, so a parent that orchestrates is in a
//! circle when the way back to it leaves its subtree (`strategy/mod.rs` naming `bayes`, which
//! names the parent's trait).
//!
//! Test code (`#[cfg(test)]` modules, files and items) is left out: a file's tests may go through
//! the crate's front door (a strategy's tests build it by name through the registry that names
//! every strategy), which leads back to the file under test by design.
//!
//! The graph is read from tokens, not from rustc: other `cfg`s are not evaluated (both sides
//! count, as a reader sees both) and macro-generated items are unseen. To see a crate's graph, run
//! `cargo test --release --test import_graph -- --nocapture edges`.

mod cycles;
mod lex;
mod resolve;
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use resolve::Edge;
use scan::Files;

/// Each crate of the workspace: its `src/` and its root file.
const CRATES: &[(&str, &str)] = &[
    ("src", "lib.rs"),
    ("tunable-search/src", "lib.rs"),
    ("tunable-runtime/src", "lib.rs"),
    ("tunable-macros/src", "lib.rs"),
    ("tunable-distributed/src", "lib.rs"),
    ("cargo-tunable/src", "main.rs"),
];

/// A crate's graph, one edge per pair of files, and its circles.
struct Graph {
    edges: BTreeMap<(PathBuf, PathBuf), Edge>,
    circles: Vec<Vec<PathBuf>>,
    missing: Vec<PathBuf>,
    /// Files under `src/` that no `mod` declaration reaches.
    unreached: Vec<PathBuf>,
}

fn graph(files: &Files, root: &str) -> Graph {
    let krate = scan::scan(files, root);
    let edges = resolve::by_pair(&resolve::edges(&krate));
    let circles = cycles::circles(&edges);
    let reached: BTreeSet<&PathBuf> = krate.modules.iter().map(|m| &m.file).collect();
    let unreached = files
        .keys()
        .filter(|f| !reached.contains(f))
        .cloned()
        .collect();
    Graph {
        edges,
        circles,
        missing: krate.missing,
        unreached,
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut failures = String::new();
    for (dir, root) in CRATES {
        let files = scan::read_dir(&workspace().join(dir));
        let g = graph(&files, root);
        assert!(
            g.missing.is_empty(),
            "{dir}: `mod` declarations name files that are not there: {:?}",
            g.missing
        );
        // A file the walk does not reach would escape the check.
        assert!(
            g.unreached.is_empty(),
            "{dir}: files no `mod` declaration reaches: {:?}",
            g.unreached
        );
        assert!(
            !g.edges.is_empty() || files.len() == 1,
            "{dir}: no edges read"
        );
        failures.push_str(&cycles::report(dir, &g.circles, &g.edges));
    }
    assert!(
        failures.is_empty(),
        "files that import each other in a circle (give what they share a leaf module of its \
         own, see STYLE.md, \"Imports point one way\"):\n{failures}"
    );
}

/// Prints every crate's edges (with `--nocapture`), and checks that the walk finds edges the
/// tree is known to hold, some only through re-exports.
#[test]
fn edges() {
    let known = [
        // `use super::GpParams` through `bayes/mod.rs`'s re-export.
        (
            "tunable-search/src",
            "bayes/surrogate.rs",
            "bayes/hyperparameters.rs",
        ),
        // `crate::evaluator::Launcher` through `evaluator.rs`'s re-export.
        ("tunable-distributed/src", "worker.rs", "process.rs"),
        ("tunable-runtime/src", "tuner/hook.rs", "tuner/spec.rs"),
        ("cargo-tunable/src", "show.rs", "shown.rs"),
    ];
    let mut found = BTreeSet::new();
    for (dir, root) in CRATES {
        let g = graph(&scan::read_dir(&workspace().join(dir)), root);
        println!("{dir}/: {} edges", g.edges.len());
        for ((from, to), e) in &g.edges {
            println!(
                "  {}:{} -> {} ({})",
                from.display(),
                e.line,
                to.display(),
                e.path
            );
            found.insert((dir.to_string(), from.clone(), to.clone()));
        }
    }
    for (dir, from, to) in known {
        assert!(
            found.contains(&(dir.to_string(), PathBuf::from(from), PathBuf::from(to))),
            "{dir}: no edge {from} -> {to}"
        );
    }
}

// The check's own tests, on small crates written here.

fn files(list: &[(&str, &str)]) -> Files {
    list.iter()
        .map(|(path, text)| (PathBuf::from(path), text.to_string()))
        .collect()
}

fn pairs(g: &Graph) -> Vec<(String, String)> {
    g.edges
        .keys()
        .map(|(a, b)| (a.display().to_string(), b.display().to_string()))
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

fn names(circle: &[PathBuf]) -> Vec<String> {
    circle.iter().map(|p| p.display().to_string()).collect()
}

#[test]
fn two_files_that_import_each_other_are_a_circle() {
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            ("b.rs", "pub struct B;\nfn f(_: crate::a::A) {}\n"),
        ]),
        "lib.rs",
    );
    assert_eq!(g.circles.len(), 1);
    assert_eq!(names(&g.circles[0]), ["a.rs", "b.rs"]);
    let report = cycles::report("src", &g.circles, &g.edges);
    assert!(report.contains("a.rs:1 -> b.rs (crate::b::B)"), "{report}");
    assert!(report.contains("b.rs:2 -> a.rs (crate::a::A)"), "{report}");
}

#[test]
fn a_longer_circle_names_every_file() {
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
            ("a.rs", "use super::b::B;\npub struct A;\n"),
            ("b.rs", "use crate::c::C;\npub struct B;\n"),
            ("c/mod.rs", "mod inner;\npub use inner::C;\n"),
            ("c/inner.rs", "pub struct C(crate::a::A);\n"),
            ("d.rs", "use crate::a::A;\n"),
        ]),
        "lib.rs",
    );
    assert_eq!(g.circles.len(), 1);
    assert_eq!(names(&g.circles[0]), ["a.rs", "b.rs", "c/inner.rs"]);
}

#[test]
fn a_graph_without_circles_passes() {
    let g = graph(
        &files(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            (
                "a.rs",
                "use crate::{b::B, c::{self, C}};\npub struct A(B, C);\n",
            ),
            ("b.rs", "use crate::c::C;\npub struct B(C);\n"),
            ("c.rs", "pub struct C;\n"),
        ]),
        "lib.rs",
    );
    assert!(g.circles.is_empty(), "{:?}", g.circles);
    assert_eq!(
        pairs(&g),
        [
            pair("a.rs", "b.rs"),
            pair("a.rs", "c.rs"),
            pair("b.rs", "c.rs")
        ]
    );
}

#[test]
fn a_hub_that_re_exports_is_no_stop_on_the_way() {
    // `lib.rs` re-exports both; `a` names `B` through it. Not a circle: the path leads to
    // `b.rs`, and `lib.rs` only passes names through.
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\npub use a::A;\npub use b::B;\n"),
            ("a.rs", "use crate::B;\npub struct A;\n"),
            ("b.rs", "pub struct B;\n"),
        ]),
        "lib.rs",
    );
    assert!(g.circles.is_empty(), "{:?}", g.circles);
    assert_eq!(pairs(&g), [pair("a.rs", "b.rs")]);
}

#[test]
fn a_hub_whose_own_code_uses_a_re_export_imports_it() {
    let crate_with = |hub: &str| {
        graph(
            &files(&[
                ("lib.rs", "mod a;\nmod hub;\n"),
                ("hub.rs", hub),
                ("a.rs", "pub struct A(crate::hub::H);\n"),
            ]),
            "lib.rs",
        )
    };
    let passing = crate_with("pub use crate::a::A;\npub struct H;\n");
    assert!(passing.circles.is_empty(), "{:?}", pairs(&passing));
    let using = crate_with("pub use crate::a::A;\npub struct H;\nfn f(_: A) {}\n");
    assert_eq!(using.circles.len(), 1, "{:?}", pairs(&using));
    assert_eq!(names(&using.circles[0]), ["a.rs", "hub.rs"]);
}

#[test]
fn a_parent_and_its_children_are_one_module_tree() {
    // `strategy/mod.rs` declares and uses its children; they use its trait: the tree, no circle.
    let g = graph(
        &files(&[
            (
                "lib.rs",
                "pub mod strategy;\npub mod bayes;\npub struct Space;\n",
            ),
            (
                "strategy/mod.rs",
                "pub mod random;\npub trait Strategy {}\nfn by_name() { random::Random::new(); }\n",
            ),
            (
                "strategy/random.rs",
                "use super::Strategy;\nuse crate::Space;\npub struct Random;\n",
            ),
            ("bayes.rs", "use crate::strategy::Strategy;\n"),
        ]),
        "lib.rs",
    );
    assert!(g.circles.is_empty(), "{:?}", g.circles);
    assert_eq!(
        pairs(&g),
        [
            pair("bayes.rs", "strategy/mod.rs"),
            pair("strategy/mod.rs", "strategy/random.rs")
        ]
    );
}

#[test]
fn a_parent_is_in_a_circle_that_leaves_its_subtree() {
    // The parent's registry names `bayes`, which names the parent's trait back.
    let g = graph(
        &files(&[
            ("lib.rs", "pub mod strategy;\npub mod bayes;\n"),
            (
                "strategy/mod.rs",
                "pub trait Strategy {}\nfn by_name() { crate::bayes::Bayes::new(); }\n",
            ),
            (
                "bayes.rs",
                "use crate::strategy::Strategy;\npub struct Bayes;\n",
            ),
        ]),
        "lib.rs",
    );
    assert_eq!(g.circles.len(), 1);
    assert_eq!(names(&g.circles[0]), ["bayes.rs", "strategy/mod.rs"]);
}

#[test]
fn a_module_path_leads_to_its_file_and_code_paths_count() {
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "pub fn f() { let _ = super::b::helpers::g(); }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    fn t() { f(); }\n}\n",
            ),
            ("b.rs", "pub mod helpers;\n"),
            ("b/helpers.rs", "pub fn g() {}\n"),
        ]),
        "lib.rs",
    );
    // `super::` inside `mod tests` is `a.rs` itself: no edge.
    assert_eq!(pairs(&g), [pair("a.rs", "b/helpers.rs")]);
}

#[test]
fn comments_strings_and_other_crates_lead_nowhere() {
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "//! See [`crate::b::B`].\nuse std::fmt;\nuse serde::Serialize;\nconst S: &str = \"crate::b::B\";\n/// crate::b::B\npub struct A;\n",
            ),
            ("b.rs", "use crate::a::A;\npub struct B;\n"),
        ]),
        "lib.rs",
    );
    assert_eq!(pairs(&g), [pair("b.rs", "a.rs")]);
}

#[test]
fn test_code_is_left_out() {
    let g = graph(
        &files(&[
            ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod testing;\n"),
            (
                "a.rs",
                "use crate::b::B;\npub struct A;\n#[cfg(test)]\nmod tests {\n    use crate::testing::T;\n}\n",
            ),
            (
                "b.rs",
                "pub struct B;\n#[cfg(test)]\nuse crate::a::A;\n#[cfg(test)]\nmod tests {\n    fn t() { crate::a::A; }\n}\n",
            ),
            ("testing.rs", "pub struct T(crate::a::A);\n"),
        ]),
        "lib.rs",
    );
    assert_eq!(pairs(&g), [pair("a.rs", "b.rs")]);
}

#[test]
fn path_attributes_and_inline_modules_are_followed() {
    let g = graph(
        &files(&[
            (
                "lib.rs",
                "#[path = \"private.rs\"]\npub mod __private;\npub mod outer {\n    #[path = \"x.rs\"]\n    pub mod x;\n}\n",
            ),
            ("private.rs", "pub use crate::outer::x::X;\n"),
            ("outer/x.rs", "pub struct X;\n"),
            ("y.rs", "use crate::__private::X;\n"),
        ]),
        "lib.rs",
    );
    assert!(g.missing.is_empty(), "{:?}", g.missing);
    assert_eq!(g.unreached, [PathBuf::from("y.rs")]);
}
