//! # A kernel's static description
//!
//! [`KernelSpec`] holds what `#[tunable]` knows of a kernel at compile time (name, crate,
//! budget, strategy, timing and checking): the first-run hook ([`super::hook`]), the lookup, the
//! evaluate mode and the choice query all read it. Reached as `tuner::hook::KernelSpec`.

use super::{TuneOptions, Verify, session};
use crate::RuntimeError;
use crate::measure::Repeats;
use crate::settings::{self, env_usize};
use tunable_search::Space;
use tunable_search::objective::Goal;

/// Static facts about a kernel, from its `#[tunable]` attribute.
#[derive(Debug)]
pub struct KernelSpec {
    /// Its name (the function's, or the `name` option).
    pub name: &'static str,
    /// `CARGO_MANIFEST_DIR` of the crate that defines it.
    pub manifest_dir: &'static str,
    /// Evaluations per tuning.
    pub budget: usize,
    /// Strategy spec.
    pub strategy: &'static str,
    /// Seed of the strategy (the attribute's `seed`, default
    /// [`SEED`](tunable_search::defaults::SEED)): the same seed asks for the same
    /// configurations in the same order, given the same results ([`settings::seed`]).
    pub seed: u64,
    /// The metrics of the attribute's `metric` options, `name = expression`, checked at compile
    /// time ([`Goal`]).
    pub metrics: &'static [&'static str],
    /// What tuning pursues: the attribute's `objective`, or its `objectives` (default
    /// `["time"]`); `TUNABLE_OBJECTIVE` overrides it ([`settings::objective`]).
    pub objectives: &'static [&'static str],
    /// The rule that chooses the shipped point of a front (the attribute's `prefer`; default
    /// the first objective's best); `TUNABLE_PREFER` overrides it ([`settings::prefer`]).
    pub prefer: Option<&'static str>,
    /// Timed runs per configuration.
    pub repeats: u32,
    /// Untimed runs first.
    pub warmup: u32,
    /// Whether and against what outputs are checked while tuning.
    pub verify: Verify,
    /// Fingerprint of the function as written (its signature and body, as tokens: formatting and
    /// comments do not count), computed by `#[tunable]`; the journal is kept per fingerprint (and per
    /// source of the GPU programs it builds), so an edited kernel is measured afresh.
    pub body: u64,
    /// Whether the attribute names a `device` (GPU kernels do): only such a kernel is run once
    /// before tuning, when no reference run does, to see the GPU programs it builds (see
    /// `build_fingerprint`).
    pub device_given: bool,
    /// The hashes of the kernel source files the attribute's `source` option names
    /// (`tunable_search::format::tuned::source_hash`), recorded in every entry tuned: a later
    /// build whose files hash otherwise does not bake the entry, and tuning does not take it
    /// for known.
    pub sources: &'static [u64],
}

impl KernelSpec {
    /// The tuning options of this kernel over `space`: its attribute's, overridden by
    /// `TUNABLE_BUDGET`, `TUNABLE_STRATEGY`, `TUNABLE_SEED`, `TUNABLE_OBJECTIVE`,
    /// `TUNABLE_PREFER`, `TUNABLE_BATCH` (unset: one at a time, see [`TuneOptions::batch`]) and
    /// `TUNABLE_PREBUILD` ([`TuneOptions::prebuild`]); `TUNABLE_TIME` bounds its wall time. An
    /// error names a setting that does not parse, or objectives the kernel does not know.
    pub fn options(&self, space: &Space) -> Result<TuneOptions, RuntimeError> {
        Ok(TuneOptions {
            budget: env_usize("TUNABLE_BUDGET")?.unwrap_or(self.budget),
            batch: env_usize("TUNABLE_BATCH")?.map_or(1, |b| b.max(1)),
            prebuild: settings::prebuild()?,
            strategy: std::env::var("TUNABLE_STRATEGY")
                .unwrap_or_else(|_| self.strategy.to_owned()),
            seed: settings::seed()?.unwrap_or(self.seed),
            goal: self.goal(space)?,
            max_seconds: session::max_seconds(),
            ..TuneOptions::default()
        })
    }

    /// What tuning pursues: the attribute's metrics, objectives and rule, the objectives and
    /// rule overridden by `TUNABLE_OBJECTIVE` and `TUNABLE_PREFER`.
    pub fn goal(&self, space: &Space) -> Result<Goal, RuntimeError> {
        let params: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        let bad = |name, value: String, error| RuntimeError::BadGoal {
            name,
            value,
            kernel: self.name,
            error: Box::new(error),
        };
        // The attribute's were checked at compile time; an error here is a setting's.
        let own = Goal::new(self.metrics, self.objectives, self.prefer, &params)
            .map_err(|e| bad("objective", self.objectives.join(","), e))?;
        let (objectives, prefer) = (settings::objective(), settings::prefer());
        if objectives.is_none() && prefer.is_none() {
            return Ok(own);
        }
        let names: Vec<String> =
            objectives.unwrap_or_else(|| own.aims().iter().map(ToString::to_string).collect());
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // A rule of the attribute's applies to the setting's objectives only if they are its own.
        let prefer = prefer.or_else(|| {
            (settings::objective().is_none())
                .then(|| self.prefer.map(str::to_owned))
                .flatten()
        });
        own.with_objectives(&names, prefer.as_deref()).map_err(|e| {
            let (name, value) = match &e {
                tunable_search::objective::GoalError::Prefer { rule, .. } => {
                    (settings::PREFER_VAR, rule.clone())
                }
                _ => (settings::OBJECTIVE_VAR, names.join(",")),
            };
            bad(name, value, e)
        })
    }

    /// How each variant is timed: the kernel's `warmup` and `repeats`, one warm-up run less when
    /// its output is `checked` first (that untimed run warms it up).
    pub fn measurement(&self, checked: bool) -> Repeats {
        Repeats::new(self.warmup.saturating_sub(u32::from(checked)), self.repeats)
    }
}
