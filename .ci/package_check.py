#!/usr/bin/env python3
"""What crates.io would receive: each workspace crate's `cargo package --list`, checked for what
the crate needs to build.

For every workspace package, without compiling anything:
- its library, proc macro and binaries are in the package;
- every file that a packaged `.rs` file includes (`include_str!`, `include_bytes!` of a literal
  path, resolved as rustc resolves it) is in the package, so no build or unit test of the
  published crate reaches outside it (a file beside the workspace, a test's data);
- every module file that a packaged `.rs` file declares (`mod x;`, `#[path = ...]`) is in it;
- its readme and both licence files are in it, and its files sum to under crates.io's 10 MB.

Targets that a package leaves out on purpose (tests and benches that replay the shared data set)
are dropped from the published manifest by cargo itself. Run from the repository root.
"""

import json
import os
import re
import subprocess
import sys

LIMIT = 10 * 1024 * 1024
INCLUDE = re.compile(r'include_(?:str|bytes)!\(\s*"([^"]+)"\s*\)')
MOD = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(r#)?(\w+)\s*;')
INLINE_MOD = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?:r#)?(\w+)\s*\{')
RAW_STRING = re.compile(r'r(#+)".*?"\1', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
CHAR = re.compile(r"'(?:\\.|[^'\\])'")
PATH_ATTR = re.compile(r'^\s*#\[path\s*=\s*"([^"]+)"\s*\]')


def code_lines(text):
    """The lines of a Rust file with `//` comments cut (doc comments show include_str! in
    examples that are not code)."""
    for line in text.splitlines():
        cut = line.find("//")
        # A `//` inside a string literal (a URL) is rare in these crates; cut only when the part
        # before it has balanced quotes.
        if cut >= 0 and line[:cut].count('"') % 2 == 0:
            line = line[:cut]
        yield line


def check(pkg):
    root = os.path.dirname(pkg["manifest_path"])
    name = pkg["name"]
    out = subprocess.run(
        ["cargo", "package", "--list", "--allow-dirty", "--offline", "-p", name],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        return [f"{name}: cargo package --list failed:\n{out.stderr}"]
    listed = set(out.stdout.split())
    problems = []

    def need(rel, why):
        if rel not in listed:
            problems.append(f"{name}: {rel} is not in the package ({why})")

    roots = set()
    for t in pkg["targets"]:
        rel = os.path.relpath(t["src_path"], root)
        roots.add(rel)
        if set(t["kind"]) & {"lib", "proc-macro", "bin"}:
            need(rel, f"the {t['kind'][0]} target {t['name']}")
    for f in ("README.md", "LICENSE-MIT", "LICENSE-APACHE"):
        need(f, "crates.io shows the readme; the licence is MIT OR Apache-2.0")

    size = 0
    for rel in sorted(listed):
        path = os.path.join(root, rel)
        if rel in (".cargo_vcs_info.json", "Cargo.toml.orig", "Cargo.lock"):
            continue
        if rel == "README.md" and not os.path.exists(path):
            path = os.path.join(root, pkg.get("readme") or "README.md")
        if os.path.exists(path):
            size += os.path.getsize(path)
        if not rel.endswith(".rs"):
            continue
        here = os.path.dirname(rel)
        stem = os.path.splitext(os.path.basename(rel))[0]
        # Where `mod x;` looks: beside a crate root or a mod.rs, else in a folder named after
        # the file.
        mod_dir = here if rel in roots or stem in ("lib", "main", "mod") else os.path.join(here, stem)
        with open(path, encoding="utf-8") as f:
            text = RAW_STRING.sub('""', f.read())
        path_attr = None
        inline = []  # the inline modules (`mod a { ... }`) the line is in: (name, depth outside)
        depth = 0
        for line in code_lines(text):
            for inc in INCLUDE.findall(line):
                target = os.path.normpath(os.path.join(here, inc))
                if target.startswith(".."):
                    problems.append(f"{name}: {rel} includes {inc}, outside the package")
                else:
                    need(target, f"{rel} includes it")
            # Inside `mod a { ... }`, `mod x;` and `#[path]` look in a folder `a` below.
            base = os.path.join(mod_dir, *[n for n, _ in inline])
            m = PATH_ATTR.match(line)
            if m:
                path_attr = m.group(1)
                continue
            m = MOD.match(line)
            if m:
                if path_attr:
                    at = here if not inline else base
                    need(os.path.normpath(os.path.join(at, path_attr)), f"{rel} declares it")
                else:
                    file = os.path.join(base, m.group(2))
                    if f"{file}.rs" not in listed and f"{file}/mod.rs" not in listed:
                        problems.append(f"{name}: {rel} declares mod {m.group(2)}, whose file is not in the package")
            if line.strip() and not line.strip().startswith("#["):
                path_attr = None
            code = CHAR.sub("", STRING.sub("", line))
            m = INLINE_MOD.match(code)
            if m:
                inline.append((m.group(1), depth))
            depth += code.count("{") - code.count("}")
            while inline and depth <= inline[-1][1]:
                inline.pop()
    if size >= LIMIT:
        problems.append(f"{name}: {size} bytes of files, over crates.io's limit of {LIMIT}")
    print(f"{name}: {len(listed)} files, {size / 1024:.0f} KiB")
    return problems


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    problems = []
    for pkg in meta["packages"]:
        problems += check(pkg)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
