//! # A crate's modules, and what each file names
//!
//! Walks the module tree from the crate root as rustc does (`mod x;` is `x.rs` or `x/mod.rs`
//! beside a `mod.rs`, `lib.rs` or `main.rs`, under `name/` beside any other file;
//! `#[path = "…"]` is honoured; an inline `mod x { … }` is a module of the same file) and records,
//! per module, its submodules, the names it defines and its `use` bindings, and, per file, every
//! path that may lead to another file: each `use` tree's leaves, each path in code that starts at
//! `crate`, `self`, `super` or a name in scope, and each use of a name the file re-exports.
//!
//! `cfg` is not evaluated: both sides of a `#[cfg(feature …)]` count, as a reader sees both. Test
//! code is left out: an item under `#[cfg(test)]` (a `mod tests { … }`, a test-only file such as
//! `mod testing;`, a `use`) names nothing for the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lex::{Kind, Token, tokens};

/// A `use` leaf: `path` is bound as `name` (`None` for a glob, `use path::*`).
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: Option<String>,
    pub path: Vec<String>,
}

/// One module of the crate.
#[derive(Debug, Default)]
pub struct Module {
    /// The file that holds its items (for an inline module, the file it is written in).
    pub file: PathBuf,
    pub parent: Option<usize>,
    pub children: BTreeMap<String, usize>,
    /// Items it defines (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `union`,
    /// `macro_rules!`).
    pub defined: BTreeSet<String>,
    /// Its item-level `use` bindings.
    pub uses: Vec<Binding>,
}

/// A path written in a file, to resolve in the module that is in scope there.
#[derive(Debug, Clone)]
pub struct Reference {
    pub file: PathBuf,
    pub line: usize,
    pub module: usize,
    pub path: Vec<String>,
}

/// A crate: its modules (0 is the root) and the references of its files.
#[derive(Debug, Default)]
pub struct Crate {
    pub modules: Vec<Module>,
    pub references: Vec<Reference>,
    /// Files named by a `mod` declaration but not found (a broken walk should not pass quietly).
    pub missing: Vec<PathBuf>,
}

/// The source files a crate is read from: path (relative to its `src/`) → text.
pub type Files = BTreeMap<PathBuf, String>;

/// Reads every `.rs` file under `dir`, keyed by its path relative to `dir`.
pub fn read_dir(dir: &Path) -> Files {
    let mut files = Files::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let entries = std::fs::read_dir(dir.join(&rel))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(&rel).display()));
        for entry in entries {
            let name = entry.unwrap().file_name();
            let rel = rel.join(&name);
            let full = dir.join(&rel);
            if full.is_dir() {
                stack.push(rel);
            } else if rel.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&full)
                    .unwrap_or_else(|e| panic!("{}: {e}", full.display()));
                files.insert(rel, text);
            }
        }
    }
    files
}

/// Scans the crate whose root file is `root` (`lib.rs` or `main.rs`).
pub fn scan(files: &Files, root: &str) -> Crate {
    let mut krate = Crate::default();
    krate.modules.push(Module {
        file: PathBuf::from(root),
        ..Module::default()
    });
    let mut scanned = BTreeSet::new();
    scan_file(files, &mut krate, &mut scanned, 0, Path::new(root), false);
    krate
}

/// The directory in which the submodules of the file `file` live.
fn child_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if matches!(stem, "mod" | "lib" | "main") {
        dir
    } else {
        dir.join(stem)
    }
}

/// One open brace: a module's body (the module outside it), or any other block; each with
/// whether the code outside it was test code.
enum Frame {
    Module(usize, bool),
    Block(bool),
}

/// Whether the tokens at `i` are `#[cfg(test)]`.
fn cfg_test(t: &[Token], i: usize) -> bool {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    want.iter().enumerate().all(|(k, w)| {
        t.get(i + k).is_some_and(|tok| match &tok.kind {
            Kind::Ident(s) => s == w,
            Kind::Punct(c) => w.len() == 1 && w.starts_with(*c),
            _ => false,
        })
    })
}

fn scan_file(
    files: &Files,
    krate: &mut Crate,
    scanned: &mut BTreeSet<PathBuf>,
    module: usize,
    file: &Path,
    mut in_test: bool,
) {
    if !scanned.insert(file.to_path_buf()) {
        return;
    }
    let Some(source) = files.get(file) else {
        krate.missing.push(file.to_path_buf());
        return;
    };
    let t = tokens(source);
    // The module whose body each open brace is, and for inline modules the directory chain.
    let mut frames: Vec<Frame> = Vec::new();
    let mut inline_dirs: Vec<String> = Vec::new();
    let mut current = module;
    let mut pending_module: Option<usize> = None;
    // The last `#[path = "…"]` seen and the index of the last item boundary (`;`, `{`, `}`).
    let mut path_attr: Option<(usize, String)> = None;
    let mut boundary: Option<usize> = None;
    // The last `#[cfg(test)]` seen: the item it gates is test code.
    let mut test_attr: Option<usize> = None;
    // Names this file re-exports (`pub use`), and the identifiers its code names.
    let mut reexports: Vec<(usize, Binding, usize)> = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    let item_level =
        |frames: &[Frame]| frames.last().is_none_or(|f| matches!(f, Frame::Module(..)));
    let mut i = 0;
    while i < t.len() {
        let tok = &t[i];
        let prev_sep = i > 0 && (t[i - 1].kind == Kind::PathSep || t[i - 1].is_punct('.'));
        let gated = test_attr.is_some_and(|at| boundary.is_none_or(|b| at > b));
        match &tok.kind {
            Kind::Punct('{') => {
                boundary = Some(i);
                match pending_module.take() {
                    Some(m) => {
                        frames.push(Frame::Module(current, in_test));
                        current = m;
                    }
                    None => frames.push(Frame::Block(in_test)),
                }
                in_test |= gated;
                i += 1;
            }
            Kind::Punct('}') => {
                boundary = Some(i);
                match frames.pop() {
                    Some(Frame::Module(outer, was_test)) => {
                        current = outer;
                        in_test = was_test;
                        inline_dirs.pop();
                    }
                    Some(Frame::Block(was_test)) => in_test = was_test,
                    None => {}
                }
                i += 1;
            }
            Kind::Punct(';') => {
                boundary = Some(i);
                pending_module = None;
                i += 1;
            }
            Kind::Punct('#') if cfg_test(&t, i) => {
                test_attr = Some(i);
                i += 7;
            }
            Kind::Punct('#') if t.get(i + 2).is_some_and(|a| a.is("path")) => {
                if let (Some(Kind::Punct('[')), Some(Kind::Punct('=')), Some(Kind::Str(p))) = (
                    t.get(i + 1).map(|t| &t.kind),
                    t.get(i + 3).map(|t| &t.kind),
                    t.get(i + 4).map(|t| &t.kind),
                ) {
                    path_attr = Some((i, p.clone()));
                }
                i += 1;
            }
            Kind::Ident(word) if word == "use" && !prev_sep => {
                let public = visibility_before(&t, i);
                let (leaves, end) = use_tree(&t, i + 1);
                for (name, path) in leaves {
                    let binding = Binding { name, path };
                    if item_level(&frames) {
                        krate.modules[current].uses.push(binding.clone());
                    }
                    if in_test || gated {
                        continue;
                    }
                    if public && item_level(&frames) {
                        reexports.push((current, binding, tok.line));
                    } else {
                        krate.references.push(Reference {
                            file: file.to_path_buf(),
                            line: tok.line,
                            module: current,
                            path: binding.path,
                        });
                    }
                }
                i = end;
            }
            Kind::Ident(word) if word == "mod" && item_level(&frames) && !prev_sep => {
                let Some(name) = t.get(i + 1).and_then(Token::ident) else {
                    i += 1;
                    continue;
                };
                let inline = t.get(i + 2).is_some_and(|t| t.is_punct('{'));
                let child = match krate.modules[current].children.get(name) {
                    Some(&c) => c,
                    None => {
                        krate.modules.push(Module {
                            file: file.to_path_buf(),
                            parent: Some(current),
                            ..Module::default()
                        });
                        let c = krate.modules.len() - 1;
                        krate.modules[current].children.insert(name.to_string(), c);
                        c
                    }
                };
                let mut dir = child_dir(file);
                for d in &inline_dirs {
                    dir.push(d);
                }
                if inline {
                    inline_dirs.push(name.to_string());
                    pending_module = Some(child);
                } else {
                    let attr = path_attr
                        .take()
                        .filter(|(at, _)| boundary.is_none_or(|b| *at > b));
                    let target = match attr {
                        Some((_, p)) if inline_dirs.is_empty() => {
                            file.parent().unwrap_or(Path::new("")).join(p)
                        }
                        Some((_, p)) => dir.join(p),
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            if files.contains_key(&flat) {
                                flat
                            } else {
                                dir.join(name).join("mod.rs")
                            }
                        }
                    };
                    if !scanned.contains(&target) {
                        krate.modules[child].file = target.clone();
                    }
                    scan_file(files, krate, scanned, child, &target, in_test || gated);
                }
                i += 2;
            }
            Kind::Ident(word)
                if item_level(&frames)
                    && !prev_sep
                    && matches!(
                        word.as_str(),
                        "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union"
                    ) =>
            {
                let mut j = i + 1;
                while t.get(j).is_some_and(|t| t.is("mut")) {
                    j += 1;
                }
                if let Some(name) = t.get(j).and_then(Token::ident) {
                    krate.modules[current].defined.insert(name.to_string());
                }
                i += 1;
            }
            Kind::Ident(word)
                if word == "macro_rules" && t.get(i + 1).is_some_and(|t| t.is_punct('!')) =>
            {
                if let Some(name) = t.get(i + 2).and_then(Token::ident) {
                    krate.modules[current].defined.insert(name.to_string());
                }
                i += 2;
            }
            Kind::Ident(word) if !prev_sep => {
                if !(in_test || gated) {
                    named.insert(word.clone());
                }
                // A path in code: `head::seg::…`, kept when it names at least one segment.
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while t.get(j).is_some_and(|t| t.kind == Kind::PathSep) {
                    match t.get(j + 1).and_then(Token::ident) {
                        Some(seg) => path.push(seg.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                if path.len() > 1 && !(in_test || gated) {
                    krate.references.push(Reference {
                        file: file.to_path_buf(),
                        line: tok.line,
                        module: current,
                        path,
                    });
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    // A re-export is a way through, not a use: it leads from this file only where its code
    // names the re-exported item itself.
    for (module, binding, line) in reexports {
        let used = match &binding.name {
            Some(name) => named.contains(name),
            None => false,
        };
        if used {
            krate.references.push(Reference {
                file: file.to_path_buf(),
                line,
                module,
                path: binding.path,
            });
        }
    }
}

/// Whether the `use` at `i` has a visibility (`pub`, `pub(crate)`, `pub(in …)`).
fn visibility_before(t: &[Token], i: usize) -> bool {
    if i == 0 {
        return false;
    }
    if t[i - 1].is("pub") {
        return true;
    }
    if !t[i - 1].is_punct(')') {
        return false;
    }
    let mut j = i - 1;
    while j > 0 && !t[j].is_punct('(') {
        j -= 1;
    }
    j > 0 && t[j - 1].is("pub")
}

/// A leaf of a use tree: the name it binds (`None` for a glob) and its path.
type Leaf = (Option<String>, Vec<String>);

/// The leaves of the use tree that starts at `i`, and the index just past its `;`.
fn use_tree(t: &[Token], i: usize) -> (Vec<Leaf>, usize) {
    let mut leaves = Vec::new();
    let end = tree(t, i, Vec::new(), &mut leaves);
    let mut end = end;
    while end < t.len() && !t[end].is_punct(';') {
        end += 1;
    }
    (leaves, end + 1)
}

/// Parses one use tree at `i` under `prefix`; returns the index just past it.
fn tree(t: &[Token], mut i: usize, mut prefix: Vec<String>, leaves: &mut Vec<Leaf>) -> usize {
    if t.get(i).is_some_and(|t| t.kind == Kind::PathSep) {
        // `::name`: an extern crate, never this crate.
        prefix.push("::".to_string());
        i += 1;
    }
    loop {
        match t.get(i).map(|t| &t.kind) {
            Some(Kind::Punct('*')) => {
                leaves.push((None, prefix));
                return i + 1;
            }
            Some(Kind::Punct('{')) => {
                i += 1;
                while i < t.len() && !t[i].is_punct('}') {
                    i = tree(t, i, prefix.clone(), leaves);
                    if t.get(i).is_some_and(|t| t.is_punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Kind::Ident(seg)) => {
                let seg = seg.clone();
                i += 1;
                if t.get(i).is_some_and(|t| t.kind == Kind::PathSep) {
                    prefix.push(seg);
                    i += 1;
                    continue;
                }
                let mut name = seg.clone();
                if seg == "self" {
                    name = prefix.last().cloned().unwrap_or_default();
                } else {
                    prefix.push(seg);
                }
                if t.get(i).is_some_and(|t| t.is("as")) {
                    name = t
                        .get(i + 1)
                        .and_then(Token::ident)
                        .unwrap_or("_")
                        .to_string();
                    i += 2;
                }
                leaves.push((Some(name), prefix));
                return i;
            }
            _ => return i,
        }
    }
}
