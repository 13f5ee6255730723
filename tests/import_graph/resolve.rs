//! # From paths to files
//!
//! A path resolves as rustc resolves it, as far as a reader needs: `crate`, `self`, `super`, a
//! submodule or a name in scope start it; each segment then steps into a submodule, through a
//! `use` binding (a re-export leads on to the file that defines the item, however many hubs it
//! passes), or stops at the file that defines the item. A path that ends on a module leads to that
//! module's file. A path that starts anywhere else (`std::…`, another crate) leads nowhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::scan::Crate;

/// Where a path leads.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Module(usize),
    /// An item, defined in this file.
    Item(PathBuf),
}

/// How deep re-exports may chain before a path is taken to lead nowhere (a guard against loops
/// of `use`, which rustc rejects anyway).
const MAX_DEPTH: usize = 32;

/// One edge of the import graph: `from` names something that `to` defines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: PathBuf,
    pub to: PathBuf,
    /// Where (`file:line`) and what (`crate::a::B`), for the report.
    pub line: usize,
    pub path: String,
}

/// The file-level import graph of a crate: every edge between two files of which the target is
/// not an ancestor of the source in the module tree.
///
/// A file's ancestors (its parent module's file, up to the crate root) are its namespace: a
/// submodule sees even their private items, and naming what they define is the module tree
/// itself, not an import between peers. A parent's own use of its children does count, so a
/// parent is in a circle when the way back to it runs through a file outside its subtree.
pub fn edges(krate: &Crate) -> BTreeSet<Edge> {
    // The module each file holds (an inline module's file is its enclosing file's, found first).
    let mut module_of: BTreeMap<&PathBuf, usize> = BTreeMap::new();
    for (i, m) in krate.modules.iter().enumerate() {
        module_of.entry(&m.file).or_insert(i);
    }
    let is_ancestor = |ancestor: usize, mut m: usize| loop {
        if m == ancestor {
            return true;
        }
        match krate.modules[m].parent {
            Some(p) => m = p,
            None => return false,
        }
    };
    let mut out = BTreeSet::new();
    for r in &krate.references {
        let Some(target) = start(krate, r.module, &r.path, 0) else {
            continue;
        };
        let to = match target {
            Target::Module(m) => krate.modules[m].file.clone(),
            Target::Item(file) => file,
        };
        let up = match (module_of.get(&r.file), module_of.get(&to)) {
            (Some(&from), Some(&to)) => is_ancestor(to, from),
            _ => false,
        };
        if to != r.file && !up {
            out.insert(Edge {
                from: r.file.clone(),
                to,
                line: r.line,
                path: r.path.join("::"),
            });
        }
    }
    out
}

/// Collapses `edges` to one per pair of files (the first, by line), for the cycle search.
pub fn by_pair(edges: &BTreeSet<Edge>) -> BTreeMap<(PathBuf, PathBuf), Edge> {
    let mut out: BTreeMap<(PathBuf, PathBuf), Edge> = BTreeMap::new();
    for e in edges {
        out.entry((e.from.clone(), e.to.clone()))
            .and_modify(|old| {
                if e.line < old.line {
                    *old = e.clone();
                }
            })
            .or_insert_with(|| e.clone());
    }
    out
}

/// What a name means in a module.
enum Meaning {
    /// A submodule, or an item defined here or re-exported from elsewhere in the crate.
    Here(Target),
    /// A `use` of another crate's item.
    Elsewhere,
    /// Not a name this reading knows (the prelude, another crate, a macro's item).
    Unknown,
}

/// Resolves `path` as written in `module`.
fn start(krate: &Crate, module: usize, path: &[String], depth: usize) -> Option<Target> {
    let (head, rest) = path.split_first()?;
    let first = match head.as_str() {
        "crate" => Target::Module(0),
        "self" => Target::Module(module),
        "super" => Target::Module(krate.modules[module].parent?),
        _ => match lookup(krate, module, head, depth) {
            Meaning::Here(t) => t,
            Meaning::Elsewhere | Meaning::Unknown => return None,
        },
    };
    walk(krate, first, rest, depth)
}

/// Follows `rest` from `at`.
fn walk(krate: &Crate, mut at: Target, rest: &[String], depth: usize) -> Option<Target> {
    for seg in rest {
        let Target::Module(m) = at else { break };
        at = match seg.as_str() {
            "super" => Target::Module(krate.modules[m].parent?),
            "self" => Target::Module(m),
            _ => match lookup(krate, m, seg, depth) {
                Meaning::Here(t) => t,
                Meaning::Elsewhere => return None,
                // Defined here by a macro, or brought in by a glob this reading cannot follow.
                Meaning::Unknown => Target::Item(krate.modules[m].file.clone()),
            },
        };
    }
    Some(at)
}

/// What `name` means in `module`: a submodule, a `use` binding, an item it defines, or a name a
/// glob import brings in.
fn lookup(krate: &Crate, module: usize, name: &str, depth: usize) -> Meaning {
    if depth > MAX_DEPTH {
        return Meaning::Unknown;
    }
    let m = &krate.modules[module];
    if let Some(&child) = m.children.get(name) {
        return Meaning::Here(Target::Module(child));
    }
    if let Some(b) = m.uses.iter().find(|b| b.name.as_deref() == Some(name)) {
        return match start(krate, module, &b.path, depth + 1) {
            Some(t) => Meaning::Here(t),
            None => Meaning::Elsewhere,
        };
    }
    if m.defined.contains(name) {
        return Meaning::Here(Target::Item(m.file.clone()));
    }
    for b in m.uses.iter().filter(|b| b.name.is_none()) {
        if let Some(Target::Module(g)) = start(krate, module, &b.path, depth + 1)
            && g != module
            && let found @ (Meaning::Here(_) | Meaning::Elsewhere) =
                lookup(krate, g, name, depth + 1)
        {
            return found;
        }
    }
    Meaning::Unknown
}
