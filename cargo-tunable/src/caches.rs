//! # Caches and their spaces
//!
//! The commands that replay Kernel Tuner caches (`bench`, `transfer`) name a cache by its file
//! stem (`convolution_milo_A100` for `convolution_milo_A100.json.gz`) and take its search space
//! from the same options: the cache's own keys, or `--space` / `--t1` for every cache, or with
//! `--spaces-dir` the Kernel Tuner T1 file `<kernel>.t1.json` whose kernel name followed by `_`
//! starts the cache's stem (`convolution_milo.t1.json` for `convolution_milo_A100.json.gz`).

use clap::Args;
use std::path::{Path, PathBuf};
use tunable_search::Space;
use tunable_search::sim::KernelTunerCache;
use tunable_search::space::load::load;

/// Where the space of each cache comes from.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct SpaceArgs {
    /// A spaces JSON or T1 file giving the space of every cache.
    #[arg(long, conflicts_with_all = ["t1", "spaces_dir"])]
    pub(crate) space: Option<PathBuf>,
    /// A Kernel Tuner T1 file giving the space of every cache.
    #[arg(long, conflicts_with = "spaces_dir")]
    pub(crate) t1: Option<PathBuf>,
    /// A folder of T1 files `<kernel>.t1.json`, matched to caches `<kernel>_<GPU>.json[.gz]`.
    #[arg(long)]
    pub(crate) spaces_dir: Option<PathBuf>,
}

impl SpaceArgs {
    /// The space of `cache`, named `stem`; `None` means the cache's own keys. A space found in
    /// `--spaces-dir` whose parameters are not the cache's (a cache of an older version of the
    /// kernel, say) is not used: the cache's own keys are.
    pub(crate) fn space_for(
        &self,
        stem: &str,
        cache: &KernelTunerCache,
    ) -> Result<Option<Space>, Box<dyn std::error::Error>> {
        let (file, found) = match (&self.space, &self.t1, &self.spaces_dir) {
            (Some(f), _, _) | (_, Some(f), _) => (Some(f.clone()), false),
            (_, _, Some(dir)) => (match_space_file(dir, stem)?, true),
            _ => (None, false),
        };
        let Some(file) = file else { return Ok(None) };
        let space = load(&file)?.builder.build()?;
        let mut theirs: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        let mut ours: Vec<&str> = cache.params.iter().map(|(n, _)| n.as_str()).collect();
        theirs.sort_unstable();
        ours.sort_unstable();
        Ok((!found || theirs == ours).then_some(space))
    }
}

/// A cache file's name without `.json` / `.json.gz`.
pub(crate) fn stem_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.trim_end_matches(".gz")
        .trim_end_matches(".json")
        .to_owned()
}

/// The T1 file `<kernel>.t1.json` in `dir` whose kernel name, followed by `_`, starts `stem`
/// (longest match).
fn match_space_file(dir: &Path, stem: &str) -> Result<Option<PathBuf>, Box<dyn std::error::Error>> {
    let mut best: Option<(usize, PathBuf)> = None;
    for entry in
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?
    {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(base) = name.strip_suffix(".t1.json") else {
            continue;
        };
        if stem.starts_with(&format!("{base}_"))
            && best.as_ref().is_none_or(|(l, _)| base.len() > *l)
        {
            best = Some((base.len(), path));
        }
    }
    Ok(best.map(|(_, p)| p))
}
