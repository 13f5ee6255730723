//! # Import circles
//!
//! The strongly connected components of the file graph (Tarjan's algorithm) that hold more than
//! one file: every file of a component reaches every other through imports, so each is one
//! circle, however many loops run through it. The report names every file of it, and every edge
//! between them with the line and the path that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::PathBuf;

use crate::resolve::Edge;

/// The circles of the graph `edges` (one per pair of files): each is its files, sorted.
pub fn circles(edges: &BTreeMap<(PathBuf, PathBuf), Edge>) -> Vec<Vec<PathBuf>> {
    let mut nodes: BTreeSet<&PathBuf> = BTreeSet::new();
    let mut next: BTreeMap<&PathBuf, Vec<&PathBuf>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        nodes.insert(from);
        nodes.insert(to);
        next.entry(from).or_default().push(to);
    }
    let mut tarjan = Tarjan {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for n in nodes {
        if !tarjan.index.contains_key(n) {
            tarjan.visit(n);
        }
    }
    let mut out = tarjan.out;
    out.sort();
    out
}

struct Tarjan<'a> {
    next: &'a BTreeMap<&'a PathBuf, Vec<&'a PathBuf>>,
    index: BTreeMap<&'a PathBuf, usize>,
    low: BTreeMap<&'a PathBuf, usize>,
    stack: Vec<&'a PathBuf>,
    on_stack: BTreeSet<&'a PathBuf>,
    out: Vec<Vec<PathBuf>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a PathBuf) {
        let i = self.index.len();
        self.index.insert(v, i);
        self.low.insert(v, i);
        self.stack.push(v);
        self.on_stack.insert(v);
        for &w in self.next.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !self.index.contains_key(w) {
                self.visit(w);
                let low = self.low[v].min(self.low[w]);
                self.low.insert(v, low);
            } else if self.on_stack.contains(w) {
                let low = self.low[v].min(self.index[w]);
                self.low.insert(v, low);
            }
        }
        if self.low[v] == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                self.out.push(component);
            }
        }
    }
}

/// A report of `circles` in the crate at `dir`: each circle's files, then its edges.
pub fn report(
    dir: &str,
    circles: &[Vec<PathBuf>],
    edges: &BTreeMap<(PathBuf, PathBuf), Edge>,
) -> String {
    let mut out = String::new();
    for files in circles {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        writeln!(
            out,
            "import circle in {dir}/ ({} files): {}",
            files.len(),
            names.join(", ")
        )
        .unwrap();
        for ((from, to), e) in edges {
            if files.contains(from) && files.contains(to) {
                writeln!(
                    out,
                    "  {}:{} -> {} ({})",
                    from.display(),
                    e.line,
                    to.display(),
                    e.path
                )
                .unwrap();
            }
        }
    }
    out
}
