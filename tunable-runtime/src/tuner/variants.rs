//! # Measuring the variants of a kernel
//!
//! Generated code hands the tuner one closure ([`Run`]) that runs any variant of the kernel on
//! the arguments of the call being tuned, and reads its output ([`Call`]). [`Variants`] is the
//! evaluator built on it: per configuration, the output of its first run is checked (with
//! `verify`), then it is timed through a [`Measurement`]; an error, a wrong output or a panic
//! makes it a failed configuration with its reason.
//!
//! A batch of a kernel that goes through a GPU backend is compiled ahead first, on a pool of
//! threads ([`crate::ahead`]): each variant of the batch is run once in collecting mode (the
//! backend hands its build over instead of building and launching), then the builds run on the
//! pool while the variants are timed in order, or before they are on a CPU device.
//!
//! Asked one at a time with hints ([`Evaluator::prepare`]: the configuration about to be
//! measured and those the strategy expects next), a GPU kernel's variants are handed to a
//! [`Pool`](ahead::Pool) that lives as long as the evaluator and keeps compiling while the
//! caller's thread measures: the speculative compilation of [`crate::ahead`]. The configuration
//! about to be measured is not handed over: the caller's thread builds it when it runs it. On a
//! device that runs on the host's cores the hints are ignored, so that no build disturbs a
//! timing.

use super::{Cost, Evaluation, Retime, capture};
use crate::ahead;
use crate::measure::{
    Measurement, compile_time, kernel_time, report_compile_time, robust_median, time_once,
};
use crate::params::Params;
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
    /// Whether a run asked a GPU backend for a kernel: then a batch is compiled ahead.
    backend: bool,
    /// The pool that compiles hinted configurations (made on the first hint that needs it).
    pool: Option<ahead::Pool>,
    /// Positions whose builds were handed to the pool.
    prepared: HashSet<usize>,
    /// Which of the hinted positions the strategy went on to ask.
    hits: ahead::Hits,
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
            pool: None,
            prepared: HashSet::new(),
            hits: ahead::Hits::default(),
        }
    }

    /// Hands the builds of the variants at `positions` over to the compile pool: each variant
    /// runs once in collecting mode, where a backend defers its build and nothing runs.
    fn collect(&mut self, positions: &[usize]) -> Vec<ahead::Build> {
        let mut builds = Vec::new();
        for &position in positions {
            if let Some(p) = P::from_values(&self.space.values(position)) {
                let run = &mut *self.run;
                // The body stops at the deferred build; its error (or panic) means nothing here.
                let (_, b) = ahead::collect(|| capture(|| run(Call::Run(&p))));
                builds.extend(b);
            }
        }
        builds
    }

    /// Hands the builds of the hinted positions (most likely first) to the pool; see
    /// [`Evaluator::prepare`]. The first, about to be measured, is left to this thread, which
    /// builds it when it runs it (see [`crate::ahead`]'s speculation). Of the others, as many
    /// as the pool has threads, or all of them once the strategy's guesses have come true
    /// ([`ahead::Hits`]). Nothing for a kernel that asked no GPU backend for anything yet, or
    /// whose device runs on the host's cores, or on a single core.
    fn hint(&mut self, likely: &[usize]) {
        if !self.backend || ahead::widest_batch() < 2 {
            return;
        }
        let likely = likely.get(1..).unwrap_or_default();
        let likely = self.hits.hand(likely, ahead::threads());
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
            .get_or_insert_with(|| ahead::Pool::new(ahead::threads()))
            .hint(likely, builds);
        report_compile_time(start.elapsed().as_secs_f64());
    }

    fn one(&mut self, position: usize) -> Evaluation {
        let Some(p) = P::from_values(&self.space.values(position)) else {
            return Evaluation::measured(Err(
                "configuration does not fit the parameter struct".to_owned()
            ));
        };
        let (run, expected, measurement) = (&mut *self.run, &self.expected, &mut self.measurement);
        let best = self.best;
        let requests = ahead::requests();
        let (kernels, compiled, start) = (kernel_time(), compile_time(), Instant::now());
        let mut check_ms = 0.0;
        let result = capture(|| match expected {
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
        });
        self.backend |= ahead::requests() > requests;
        let cost = Cost {
            measure_ms: (start.elapsed().as_secs_f64() - (compile_time() - compiled)).max(0.0)
                * 1e3,
            kernel_ms: (kernel_time() - kernels) * 1e3,
            check_ms,
        };
        let evaluation = match result {
            Ok(Ok(timing)) => {
                if timing.ms.is_finite() && !timing.early {
                    self.best = self.best.min(timing.ms);
                }
                Evaluation::timed(timing)
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
        for &p in positions {
            self.hits.asked(p);
        }
        if positions.len() < 2 || !self.backend {
            return Ok(positions.iter().map(|&p| self.one(p)).collect());
        }
        let builds = self.collect(positions);
        let (out, waited) = ahead::run_pool(builds, ahead::threads(), || {
            positions.iter().map(|&p| self.one(p)).collect()
        });
        report_compile_time(waited);
        Ok(out)
    }

    fn prepare(&mut self, likely: &[usize]) {
        self.hint(likely);
    }
}
