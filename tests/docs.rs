//! The documentation's own checks, run by `cargo test` (no mdBook needed):
//!
//! - every relative link in the README, CONTRIBUTING.md, CHANGELOG.md and `docs/**/*.md` leads to
//!   a file or folder that exists, and every `#anchor` to a heading of the file it names;
//! - `docs/SUMMARY.md` (the book's source is all of `docs/`) lists every chapter under
//!   `docs/src/`, the introduction, the results and the lab notes, and every guide chapter it
//!   lists is a doctest of the facade (`src/lib.rs`, module `guide`), so its Rust blocks compile
//!   (the results and the notes hold no Rust block); CI renders the book and checks its links in
//!   the HTML too (`.ci/book_links.py`);
//! - the README and the guide have no unlabelled code fence (rustdoc would take it for Rust) and
//!   no `ignore`d Rust block;
//! - the README stays short and opens with this repository's two commands;
//! - every `TUNABLE_*` variable the sources read is on the environment variables page.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files the checks cover, relative to the root.
fn markdown_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let mut stack = vec![PathBuf::from("docs")];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(root().join(&dir)).unwrap() {
            let e = e.unwrap();
            let rel = dir.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                if rel != Path::new("docs/book") {
                    stack.push(rel);
                }
            } else if rel.extension().is_some_and(|x| x == "md") {
                files.push(rel);
            }
        }
    }
    files.sort();
    files
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push(line);
        }
    }
    out
}

/// `line` without its inline code spans.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for c in line.chars() {
        if c == '`' {
            code = !code;
        } else if !code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// The anchor a heading gets (GitHub's and mdBook's rule): lower case, letters, digits, `-` and
/// `_` kept, spaces to `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of the headings of a Markdown file.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = fs::read_to_string(root().join(&file)).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                root().join(&file)
            } else {
                root().join(file.parent().unwrap()).join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target}: no such file", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!(
                        "{}: {target}: no heading with that anchor",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The chapters `docs/SUMMARY.md` links, relative to `docs`.
fn summary_chapters() -> Vec<String> {
    let summary = fs::read_to_string(root().join("docs/SUMMARY.md")).unwrap();
    links(&summary)
}

/// The chapters of the guide (the introduction and `src/`), which are doctests; the others are
/// the results and the lab notes.
fn guide_chapters() -> Vec<String> {
    summary_chapters()
        .into_iter()
        .filter(|c| c == "introduction.md" || c.starts_with("src/"))
        .collect()
}

#[test]
fn the_summary_lists_every_chapter_and_every_chapter_is_a_doctest() {
    let chapters = summary_chapters();
    let listed: BTreeSet<&str> = chapters.iter().map(String::as_str).collect();
    let lib = fs::read_to_string(root().join("src/lib.rs")).unwrap();
    for chapter in &chapters {
        assert!(
            root().join("docs").join(chapter).is_file(),
            "SUMMARY.md lists {chapter}, which does not exist"
        );
    }
    for chapter in guide_chapters() {
        assert!(
            lib.contains(&format!("\"../docs/{chapter}\"")),
            "{chapter} is not among the doctests of src/lib.rs (module `guide`): its Rust blocks \
             would not be compiled"
        );
    }
    for chapter in chapters.iter().filter(|c| !guide_chapters().contains(c)) {
        let text = fs::read_to_string(root().join("docs").join(chapter)).unwrap();
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("```rust")),
            "docs/{chapter} holds a Rust block, which no doctest compiles: make it a guide chapter"
        );
    }
    assert!(
        lib.contains("\"../README.md\""),
        "the README is not a doctest"
    );
    for file in markdown_files() {
        let Ok(rel) = file.strip_prefix("docs") else {
            continue;
        };
        let rel = rel.to_str().unwrap().replace('\\', "/");
        let in_book = rel.starts_with("src/")
            || rel.starts_with("notes/")
            || rel == "introduction.md"
            || rel == "results.md";
        if in_book {
            assert!(
                listed.contains(rel.as_str()),
                "docs/{rel} is not listed in docs/SUMMARY.md"
            );
        }
    }
}

#[test]
fn code_blocks_say_their_language_and_none_is_ignored() {
    let mut files = vec!["README.md".to_owned()];
    files.extend(guide_chapters().iter().map(|c| format!("docs/{c}")));
    let mut bad = Vec::new();
    for file in files {
        let text = fs::read_to_string(root().join(&file)).unwrap();
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            let Some(info) = line.trim_start().strip_prefix("```") else {
                continue;
            };
            if !fenced {
                if info.trim().is_empty() {
                    bad.push(format!(
                        "{file}:{}: a fence without a language (rustdoc compiles it as Rust)",
                        n + 1
                    ));
                }
                if info.starts_with("rust") && info.contains("ignore") {
                    bad.push(format!(
                        "{file}:{}: an ignored Rust block (use no_run, or make it compile)",
                        n + 1
                    ));
                }
            }
            fenced = !fenced;
        }
        assert!(!fenced, "{file}: a code fence is not closed");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_readme_is_short_and_opens_with_the_two_commands() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 150,
        "README.md has {} lines; the issue asks for at most 150: move material to docs/",
        lines.len()
    );
    let head = lines[..6].join("\n");
    assert!(
        head.contains("cargo run --release --example matmul_cpu --features autotune")
            && head.contains("cargo test --workspace --release"),
        "README.md must open with the main job and the test command:\n{head}"
    );
    let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == "cargo test --workspace --release"),
        ".ci/run no longer runs the README's test command"
    );
}

/// The `"TUNABLE_..."` string literals of the `.rs` files under `dir`.
fn variables_read(dir: &Path, out: &mut BTreeSet<String>) {
    for e in fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            variables_read(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let text = fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices("\"TUNABLE_") {
                let name: String = text[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
    }
}

#[test]
fn every_environment_variable_is_documented() {
    let mut names = BTreeSet::new();
    for krate in [
        ".",
        "tunable-search",
        "tunable-runtime",
        "tunable-macros",
        "tunable-distributed",
        "cargo-tunable",
    ] {
        variables_read(&root().join(krate).join("src"), &mut names);
    }
    // Names made up by doctests and unit tests of the settings themselves.
    names.retain(|n| !n.starts_with("TUNABLE_DOC_") && !n.starts_with("TUNABLE_TEST_"));
    assert!(names.contains("TUNABLE_MODE"), "the scan found {names:?}");
    let page = fs::read_to_string(root().join("docs/src/reference/environment.md")).unwrap();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !page.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "read by the sources but not in docs/src/reference/environment.md: {missing:?}"
    );
}

#[test]
fn slugs_follow_the_rule() {
    assert_eq!(slug(" Strategies and `auto`"), "strategies-and-auto");
    assert_eq!(
        slug("Search quality against Kernel Tuner"),
        "search-quality-against-kernel-tuner"
    );
    assert_eq!(
        slug("Bayesian optimization: time per evaluation"),
        "bayesian-optimization-time-per-evaluation"
    );
    assert_eq!(
        links("see [a](b.md#c) and `[not](a link)` and [x](https://e.invalid)"),
        ["b.md#c", "https://e.invalid"]
    );
}
