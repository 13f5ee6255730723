//! # Measuring the variants of a kernel
//!
//! Generated code hands the tuner one closure ([`Run`]) that runs any variant of the kernel on
//! the arguments of the call being tuned, and reads its output ([`Call`]). [`Variants`] is the
//! evaluator built on it: per configuration, the output of its first run is checked (with
//! `verify`), then it is timed through a [`Measurement`]; an error, a wrong output or a panic
//! makes it a failed configuration with its reason.
//!
//! A batch of 2 or more of a kernel that goes through a GPU backend is prebuilt
//! ([`crate::prebuild`]): each variant of the batch is run once collecting (the backend hands
//! its build over instead of building and launching), then the builds run on a pool while the
//! variants are timed in order, or before they are on a device that runs on the host's cores.
//! Told what the strategy expects to ask next ([`Evaluator::prepare`], with
//! `TuneOptions::prebuild`), a GPU kernel's variants hand their builds to a
//! [`Pool`](prebuild::Pool) that lives as long as the evaluator; the configuration about to be
//! measured is left to the caller's thread.
//!
//! A configuration of a space with clock parameters runs with its clocks applied
//! ([`super::clocking`]), from its first run on.
//!
//! Each evaluation runs in an evaluation context of its own ([`crate::evaluation`]): what the
//! backends report there is the evaluation's [`Cost`].

use super::{Cost, EnergyUse, Evaluation, Retime, capture};
use crate::evaluation::{self, EvalContext};
use crate::measure::{Measurement, report_compile_time, robust_median, time_once};
use crate::params::Params;
use crate::prebuild;
use crate::verify;
use std::collections::HashSet;
use std::convert::Infallible;
use std::time::Instant;
use tunable_search::Space;
use tunable_search::strategy::Evaluator;

/// What the tuning closure generated for a kernel is asked to do.
#[derive(Debug)]
pub enum Call<'a, P> {
    /// Run this variant on the call's arguments (after `restore`); answers `None`.
    Run(&'a P),
    /// Read the output named by `verify` (`None` without `verify`).
    Output,
    /// Read the `answer` expression (`None` without `answer`).
    Answer,
}

/// The tuning closure generated for a kernel: does what the [`Call`] asks, answering the values
/// read for `Output` and `Answer`, or the reason it failed.
pub type Run<'r, P> = dyn FnMut(Call<'_, P>) -> Result<Option<Vec<f64>>, String> + 'r;

/// The `verify` option of a kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verify {
    /// Outputs are not checked.
    Off,
    /// Against the output of the default configuration, run once before tuning.
    Reference {
        /// See [`verify::compare`].
        tolerance: f64,
    },
    /// Against the `answer` expression.
    Answer {
        /// See [`verify::compare`].
        tolerance: f64,
    },
}

/// What every variant's output must match.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// The output.
    pub output: Vec<f64>,
    /// See [`verify::compare`].
    pub tolerance: f64,
}

impl Verify {
    /// The output every variant is checked against: `None` without `verify`, the `answer`, or
    /// the output of the `default` configuration (the reference variant) run once now. A panic
    /// is an error with its message.
    pub fn expected<P: Params>(
        self,
        default: P,
        run: &mut Run<'_, P>,
    ) -> Result<Option<Expected>, String> {
        let read = |what: Result<Option<Vec<f64>>, String>, none: &str, tolerance| {
            what?
                .map(|output| Some(Expected { output, tolerance }))
                .ok_or_else(|| none.to_owned())
        };
        capture(|| match self {
            Verify::Off => Ok(None),
            Verify::Answer { tolerance } => {
                read(run(Call::Answer), "`answer` read no values", tolerance)
            }
            Verify::Reference { tolerance } => {
                run(Call::Run(&default)).map_err(|e| format!("{}: {e}", default.describe()))?;
                read(run(Call::Output), "`verify` read no output", tolerance)
            }
        })
        .unwrap_or_else(|message| Err(format!("panicked: {message}")))
    }
}

/// The evaluator of a kernel's variants on the call's own arguments: per configuration, the
/// output of its first run is checked (with an expected output), then it is timed through a
/// [`Measurement`]; an error, a wrong output or a panic makes it a failed configuration with
/// its reason.
///
/// With an expected output, each variant's first run is the checked one, untimed: give the
/// measurement one warm-up run less.
pub struct Variants<'a, 'r, P, M> {
    space: &'a Space,
    run: &'a mut Run<'r, P>,
    expected: Option<Expected>,
    measurement: M,
    best: f64,
    /// Whether a run asked a GPU backend for a kernel: then a batch is prebuilt.
    backend: bool,
    /// Whether that backend's device runs on the host's cores: then nothing is prebuilt
    /// speculatively.
    host: bool,
    /// The pool that prebuilds what the strategy expects next (made when first needed).
    pool: Option<prebuild::Pool>,
    /// Positions whose builds were handed to the pool.
    prepared: HashSet<usize>,
}

impl<'a, 'r, P: Params, M: Measurement> Variants<'a, 'r, P, M> {
    /// Variants of the configurations of `space`, run through `run`, checked against
    /// `expected` if given, timed by `measurement`.
    pub fn new(
        space: &'a Space,
        run: &'a mut Run<'r, P>,
        expected: Option<Expected>,
        measurement: M,
    ) -> Self {
        Variants {
            space,
            run,
            expected,
            measurement,
            best: f64::INFINITY,
            backend: false,
            host: false,
            pool: None,
            prepared: HashSet::new(),
        }
    }

    /// The builds of the variants at `positions`: each variant runs once collecting, where a
    /// backend hands its build over and nothing runs.
    fn collect(&mut self, positions: &[usize]) -> Vec<prebuild::Build> {
        let mut builds = Vec::new();
        for &position in positions {
            if let Some(p) = P::from_values(&self.space.values(position)) {
                let run = &mut *self.run;
                // The body stops at the deferred build; its error (or panic) means nothing here.
                let (_, b) = prebuild::collect(|| capture(|| run(Call::Run(&p))));
                builds.extend(b);
            }
        }
        builds
    }

    /// Hands the builds of `likely` (the configuration about to be measured, then those the
    /// strategy expects next, most likely first) to the pool; see [`Evaluator::prepare`]. The
    /// first is left to this thread, which builds it when it runs it. Nothing for a kernel that
    /// asked no GPU backend for anything yet, or whose device runs on the host's cores, or on a
    /// single core.
    fn submit(&mut self, likely: &[usize]) {
        let threads = prebuild::threads();
        if !self.backend || self.host || threads < 2 {
            return;
        }
        let likely = likely.get(1..).unwrap_or_default();
        let likely = &likely[..likely.len().min(threads)];
        let start = Instant::now();
        let fresh: Vec<usize> = likely
            .iter()
            .copied()
            .filter(|&p| self.prepared.insert(p))
            .collect();
        let mut builds = Vec::new();
        for p in fresh {
            builds.extend(self.collect(&[p]).into_iter().map(|b| (p, b)));
        }
        self.pool
            .get_or_insert_with(|| prebuild::Pool::new(threads))
            .submit(likely, builds);
        report_compile_time(start.elapsed().as_secs_f64());
    }

    fn one(&mut self, position: usize) -> Evaluation {
        let Some(p) = P::from_values(&self.space.values(position)) else {
            return Evaluation::measured(Err(
                "configuration does not fit the parameter struct".to_owned()
            ));
        };
        let (run, expected, measurement) = (&mut *self.run, &self.expected, &mut self.measurement);
        // The tuning's meter (see `super::metering`). A configuration slower than the incumbent
        // may still use less energy: with a meter, none is stopped early.
        let metering = evaluation::with(|c| c.meter.clone()).flatten();
        let best = if metering.is_some() {
            f64::INFINITY
        } else {
            self.best
        };
        // Clock parameters: the configuration's clocks are in force before its first run.
        if let Some(clocking) = evaluation::with(|c| c.clocks.clone()).flatten()
            && let Err(reason) = clocking.apply(self.space, position)
        {
            return Evaluation::measured(Err(reason));
        }
        let start = Instant::now();
        let mut check_ms = 0.0;
        let (result, context) = evaluation::scope(EvalContext::default(), || {
            capture(|| {
                let timing = match expected {
                    Some(e) => {
                        // The checked run is timed: the measurement may count it as its warm-up.
                        let warm = time_once(&mut || run(Call::Run(&p)).map(drop))?;
                        let reading = Instant::now();
                        let out = run(Call::Output)?.ok_or("`verify` read no output")?;
                        let checked = verify::compare(&out, &e.output, e.tolerance);
                        verify::give_back(out);
                        check_ms = reading.elapsed().as_secs_f64() * 1e3;
                        checked?;
                        measurement.measure_after(&mut || run(Call::Run(&p)).map(drop), best, warm)
                    }
                    None => measurement.measure(&mut || run(Call::Run(&p)).map(drop), best),
                }?;
                let Some(m) = metering.as_ref().filter(|_| !timing.early) else {
                    return Ok((timing, None));
                };
                let mut work = || time_once(&mut || run(Call::Run(&p)).map(drop)).map(drop);
                let drawn = crate::meter::measure(&m.meter, m.min, &mut work)
                    .map_err(|e| format!("energy: {e}"))?;
                let joules = drawn.power * timing.ms / 1e3;
                let used = EnergyUse {
                    joules,
                    watts: drawn.power,
                    clocks: drawn.clocks,
                };
                Ok((timing, Some(used)))
            })
        });
        if context.requests > 0 {
            self.backend = true;
            self.host = context.host;
        }
        let cost = Cost {
            measure_ms: (start.elapsed().as_secs_f64() - context.compile_s).max(0.0) * 1e3,
            kernel_ms: context.kernel_ms,
            check_ms,
        };
        let evaluation = match result {
            Ok(Ok((timing, energy))) => {
                if timing.ms.is_finite() && !timing.early {
                    self.best = self.best.min(timing.ms);
                }
                Evaluation {
                    energy,
                    ..Evaluation::timed(timing)
                }
            }
            Ok(Err(reason)) => Evaluation::measured(Err(reason)),
            Err(message) => Evaluation::panicked(&message),
        };
        Evaluation {
            cost: Some(cost),
            ..evaluation
        }
    }
}

impl<P: Params, M: Measurement> Retime for Variants<'_, '_, P, M> {
    fn retime(&mut self, positions: &[usize], rounds: u32) -> Vec<Result<f64, String>> {
        let params: Vec<Result<P, String>> = positions
            .iter()
            .map(|&p| {
                P::from_values(&self.space.values(p))
                    .ok_or_else(|| "configuration does not fit the parameter struct".to_owned())
            })
            .collect();
        let run = &mut *self.run;
        let mut once = |p: &P, timed: bool| -> Result<f64, String> {
            let mut work = || run(Call::Run(p)).map(drop);
            let r = capture(|| {
                if timed {
                    time_once(&mut work)
                } else {
                    work().map(|()| 0.0)
                }
            });
            r.unwrap_or_else(|message| Err(format!("panicked: {message}")))
        };
        let mut runs: Vec<Result<Vec<f64>, String>> = params
            .iter()
            .map(|p| {
                let p = p.as_ref().map_err(Clone::clone)?;
                once(p, false).map(|_| Vec::new())
            })
            .collect();
        for _ in 0..rounds {
            for (p, r) in params.iter().zip(&mut runs) {
                if let (Ok(p), Ok(samples)) = (p, &mut *r) {
                    match once(p, true) {
                        Ok(t) => samples.push(t),
                        Err(e) => *r = Err(e),
                    }
                }
            }
        }
        runs.into_iter()
            .map(|r| r.map(|mut s| robust_median(&mut s)))
            .collect()
    }
}

impl<P: Params, M: Measurement> Evaluator for Variants<'_, '_, P, M> {
    type Report = Evaluation;
    type Error = Infallible;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Evaluation>, Infallible> {
        if positions.len() < 2 || !self.backend {
            return Ok(positions.iter().map(|&p| self.one(p)).collect());
        }
        let builds = self.collect(positions);
        let (out, waited) = prebuild::run_pool(builds, prebuild::threads(), || {
            positions.iter().map(|&p| self.one(p)).collect()
        });
        report_compile_time(waited);
        Ok(out)
    }

    fn prepare(&mut self, likely: &[usize]) {
        self.submit(likely);
    }
}
