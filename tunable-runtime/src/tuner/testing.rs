//! # Test support
//!
//! A one-parameter configuration struct, as `#[tunable]` would generate it, for the tuner's
//! unit tests.

use crate::params::Params;
use tunable_search::Value;

/// A configuration of one integer parameter, `tile`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tile(pub(crate) i64);

impl Params for Tile {
    const NAMES: &'static [&'static str] = &["tile"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(t)] => Some(Tile(*t)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.0)]
    }
}

/// A fake kernel `name` over `tile` in 1..=6, 20 evaluations of `exhaustive`, `repeats` timed
/// runs after one warm-up, checked against the default configuration's output; its crate is a
/// fresh folder that does not exist yet. Its spec, its space and that folder.
pub(crate) fn fake_kernel(
    name: &'static str,
    repeats: u32,
) -> (
    crate::tuner::spec::KernelSpec,
    std::sync::Arc<tunable_search::Space>,
    std::path::PathBuf,
) {
    let dir = std::env::temp_dir().join(format!("tunable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let manifest: &'static str = Box::leak(dir.to_string_lossy().into_owned().into_boxed_str());
    let kernel = crate::tuner::spec::KernelSpec {
        name,
        manifest_dir: manifest,
        budget: 20,
        strategy: "exhaustive",
        seed: 1,
        metrics: &[],
        objectives: &["time"],
        prefer: None,
        repeats,
        warmup: 1,
        verify: crate::tuner::Verify::Reference { tolerance: 1e-6 },
        body: 0,
        device_given: false,
        sources: &[],
    };
    let space = tunable_search::SpaceBuilder::new()
        .param("tile", [1, 2, 3, 4, 5, 6])
        .build()
        .expect("a valid space");
    (kernel, std::sync::Arc::new(space), dir)
}

/// A configuration of `tile` and the clock parameter `nvml_gr_clock`, as `#[tunable]` would
/// generate it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Clocked(pub(crate) i64, pub(crate) i64);

impl Params for Clocked {
    const NAMES: &'static [&'static str] = &["tile", "nvml_gr_clock"];
    fn from_values(v: &[Value]) -> Option<Self> {
        match v {
            [Value::Int(t), Value::Int(c)] => Some(Clocked(*t, *c)),
            _ => None,
        }
    }
    fn to_values(&self) -> Vec<Value> {
        vec![Value::Int(self.0), Value::Int(self.1)]
    }
}

/// `tile` in 1..=3 and `nvml_gr_clock` in {900, 1400} MHz.
pub(crate) fn clocked_space() -> std::sync::Arc<tunable_search::Space> {
    std::sync::Arc::new(
        tunable_search::SpaceBuilder::new()
            .param("tile", [1, 2, 3])
            .param("nvml_gr_clock", [900, 1400])
            .build()
            .expect("a valid space"),
    )
}
