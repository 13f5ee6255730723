//! # The device binaries `show` lists
//!
//! Beside the tuned files, `<kernel>.artifacts/` folders hold the device binaries stored with GPU
//! kernels' winners (format and layout: [`tunable_search::format::artifact`]); a plain build
//! embeds those of its baked entries. `cargo tunable show` lists each with its kind (OpenCL
//! binary, PTX, CUBIN, wgpu pipeline cache), size, the device or architecture it was built for, and the entry it
//! belongs to: `embedded` when an entry's winner is its configuration on its device (a build
//! whose annotation still fits that entry embeds it), `unused` otherwise (the store removes
//! those when it next writes the folder). A damaged file is listed with what is wrong with it.

use serde::Serialize;
use std::path::Path;
use tunable_runtime::store::TunedEntry;
use tunable_search::Value;
use tunable_search::format::artifact::read_dir;

/// One artifact file.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Listed {
    /// The kernel (from the folder's name for a damaged file).
    pub(crate) kernel: String,
    /// The device of the entry it was stored for.
    pub(crate) device: String,
    /// The configuration it was built for.
    pub(crate) params: Vec<(String, String)>,
    /// `OpenCL binary`, `PTX`, `CUBIN` or `wgpu pipeline cache`.
    pub(crate) kind: String,
    /// Its size in bytes (of the binary, without the file's metadata).
    pub(crate) bytes: usize,
    /// The device identity (OpenCL) or architecture (CUDA) it was built for.
    pub(crate) target: String,
    /// The file, relative to the tuned folder.
    pub(crate) file: String,
    /// Whether an entry's winner is its configuration on its device.
    pub(crate) used: bool,
    /// What is wrong with a file that does not decode.
    pub(crate) damaged: Option<String>,
}

/// The artifacts of every `<kernel>.artifacts/` folder in `dir`, by file name, each marked
/// against `entries`.
pub(crate) fn list(dir: &Path, entries: &[TunedEntry]) -> Vec<Listed> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut folders: Vec<_> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.extension().is_some_and(|x| x == "artifacts"))
        .collect();
    folders.sort();
    let mut out = Vec::new();
    for folder in folders {
        let kernel = folder
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(files) = read_dir(&folder) else {
            continue;
        };
        for (path, artifact) in files {
            let file = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            out.push(match artifact {
                Ok(a) => Listed {
                    used: entries.iter().any(|e| {
                        e.kernel == a.owner.kernel
                            && e.device == a.owner.device
                            && e.params == a.owner.params
                    }),
                    kernel: a.owner.kernel,
                    device: a.owner.device,
                    params: a
                        .owner
                        .params
                        .iter()
                        .map(|(n, v)| (n.clone(), Value::from(v).to_string()))
                        .collect(),
                    kind: a.recipe.kind.to_string(),
                    bytes: a.bytes.len(),
                    target: a.recipe.target,
                    file,
                    damaged: None,
                },
                Err(why) => Listed {
                    kernel: kernel.clone(),
                    device: String::new(),
                    params: Vec::new(),
                    kind: String::new(),
                    bytes: 0,
                    target: String::new(),
                    file,
                    used: false,
                    damaged: Some(why),
                },
            });
        }
    }
    out
}

/// The artifacts of an entry (its winner on its device).
pub(crate) fn of_entry<'a>(listed: &'a [Listed], e: &TunedEntry) -> Vec<&'a Listed> {
    listed
        .iter()
        .filter(|l| {
            l.damaged.is_none()
                && l.kernel == e.kernel
                && l.device == e.device
                && l.params.len() == e.params.len()
                && l.params.iter().zip(&e.params).zip(e.values()).all(
                    |(((name, value), (stored, _)), v)| name == stored && *value == v.to_string(),
                )
        })
        .collect()
}

/// A size in bytes for people: `812 B`, `125.4 KiB`, `3.1 MiB`.
fn size(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Prints the table of artifacts (nothing without any).
pub(crate) fn print(listed: &[Listed]) {
    if listed.is_empty() {
        return;
    }
    println!();
    println!("device binaries (embedded by builds that bake their entry):");
    println!("| kernel | device | configuration | kind | size | built for | file | entry |");
    println!("|---|---|---|---|---|---|---|---|");
    let shown = crate::shown::shown;
    for l in listed {
        if let Some(why) = &l.damaged {
            println!(
                "| {} | | | | | | {} | damaged: {why} |",
                shown(&l.kernel),
                shown(&l.file)
            );
            continue;
        }
        let cfg: Vec<String> = l.params.iter().map(|(n, v)| format!("{n}={v}")).collect();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            shown(&l.kernel),
            shown(&l.device),
            shown(&cfg.join(", ")),
            l.kind,
            size(l.bytes),
            shown(&l.target),
            shown(&l.file),
            if l.used { "embedded" } else { "unused" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_for_people() {
        assert_eq!(size(812), "812 B");
        assert_eq!(size(128_436), "125.4 KiB");
        assert_eq!(size(3 << 20), "3.0 MiB");
    }
}
