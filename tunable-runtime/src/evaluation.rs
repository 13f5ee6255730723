//! # What the tuner and a backend share during an evaluation
//!
//! The body of a `#[tunable]` kernel calls its backend (`gpu.kernel(&SOURCE, params)`, a
//! launch) without a parameter for the tuner, so what the two share while a configuration is
//! evaluated is one value, [`EvalContext`], installed on the evaluating thread for the extent of
//! the evaluation:
//!
//! - the tuner creates it and installs it with [`scope`], which hands it back when the
//!   evaluation ends, to be read;
//! - a backend reads and writes only the installed one, through [`with`]; with none installed (a
//!   shipped call, a program that uses a backend without tuning) its reports go nowhere;
//! - scopes nest: when a scope ends, its time split and its requests are added to the enclosing
//!   one, so that a tuning's split holds its evaluations' and an evaluation's holds each timed
//!   run's ([`crate::measure::time_once`] is a scope of its own).
//!
//! This module is the only place that holds the installed context. Further quantities the tuner
//! and the backends share during an evaluation (an energy meter, the objective, clock settings)
//! are fields of [`EvalContext`]: the meter and the clocks are installed by the tuner, and the
//! CUDA backend notes its device there.
//!
//! Thread-locals that are not this protocol stay where they are used: the quiet flag of panic
//! capture (`tuner::capture`), the spare output buffer of [`crate::verify`], the re-entrancy
//! guard of `tuner::lookup`, the last configuration a shipped call ran (`tuner::portable::Last`,
//! in generated code), the tuner's split shown by the progress bar (`tuner::TimeSplit::live`)
//! and the recording of the programs a harness call builds (`backend::record`, which spans the
//! whole call, its reference run and its confirmation included).

use crate::prebuild::build::Build;
use std::cell::RefCell;

/// What the tuner and the backends share while one configuration is evaluated (see the
/// [module docs](self)).
#[derive(Debug, Default)]
pub struct EvalContext {
    /// While the tuner collects what to prebuild ([`crate::prebuild`]): the builds the backends
    /// hand over instead of building and launching. `None`: the variant runs.
    pub collecting: Option<Vec<Build>>,
    /// Kernels asked of a backend: an evaluation that asked none has nothing to prebuild.
    pub requests: u64,
    /// Whether the last kernel asked of a backend runs on the host's cores (PoCL, say): its
    /// builds are then done before the timing, never beside it.
    pub host: bool,
    /// The device time the launches reported, in milliseconds (`None`: none reported).
    pub device_ms: Option<f64>,
    /// The kernels' own run time, in milliseconds: every launch's device time, and the wall
    /// time of a timed run that reported none (a CPU kernel).
    pub kernel_ms: f64,
    /// Compilation the backends reported, in seconds.
    pub compile_s: f64,
    /// The tuning's energy meter, when its objective needs energy
    /// ([`crate::tuner::metering`], with the feature `autotune`): an evaluation measures
    /// energy with it after the timing.
    #[cfg(feature = "autotune")]
    pub meter: Option<crate::tuner::metering::Metering>,
    /// The tuning's hold on the device's clocks and its clock parameters, when its space has
    /// any ([`crate::tuner::clocking`], with the feature `autotune`): an evaluation applies its
    /// configuration's clocks through it before measuring.
    #[cfg(feature = "autotune")]
    pub clocks: Option<crate::tuner::clocking::Clocking>,
    /// The CUDA device (its ordinal) of the last kernel asked of the CUDA backend: the device
    /// whose meter a tuning for energy reads.
    pub cuda: Option<usize>,
}

impl EvalContext {
    /// A context in which a backend asked for a kernel hands its build over instead of building
    /// and launching it ([`crate::prebuild::collect`]).
    pub fn collecting() -> Self {
        EvalContext {
            collecting: Some(Vec::new()),
            ..EvalContext::default()
        }
    }

    /// Adds what `inner`, a scope nested in this one, measured and counted.
    fn absorb(&mut self, inner: &EvalContext) {
        self.requests += inner.requests;
        if inner.requests > 0 {
            self.host = inner.host;
        }
        if let Some(ms) = inner.device_ms {
            self.device_ms = Some(self.device_ms.unwrap_or(0.0) + ms);
        }
        self.kernel_ms += inner.kernel_ms;
        self.compile_s += inner.compile_s;
        if inner.cuda.is_some() {
            self.cuda = inner.cuda;
        }
    }
}

thread_local! {
    /// The context of the evaluation running on this thread.
    static CURRENT: RefCell<Option<EvalContext>> = const { RefCell::new(None) };
}

/// Runs `f` with `context` installed on this thread, and returns `f`'s result with the context
/// as `f` left it. The context installed before is installed again afterwards, with this one's
/// time split and requests added to it. A panic in `f` propagates; the context installed before
/// is installed again all the same.
pub fn scope<R>(context: EvalContext, f: impl FnOnce() -> R) -> (R, EvalContext) {
    struct Restore(Option<Option<EvalContext>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                let inner = CURRENT.replace(outer);
                if let Some(inner) = inner {
                    with(|o| o.absorb(&inner));
                }
            }
        }
    }
    let mut restore = Restore(Some(CURRENT.replace(Some(context))));
    let r = f();
    let outer = restore.0.take().expect("restored once");
    let inner = CURRENT
        .replace(outer)
        .expect("the scope's context is installed");
    with(|o| o.absorb(&inner));
    (r, inner)
}

/// `f` applied to the context installed on this thread; `None` when no evaluation runs here.
/// Backends report through it; the tuner reads a context when its [`scope`] ends.
pub fn with<R>(f: impl FnOnce(&mut EvalContext) -> R) -> Option<R> {
    CURRENT.with_borrow_mut(|c| c.as_mut().map(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_hands_its_context_back_and_adds_its_split_to_the_enclosing_one() {
        assert!(with(|_| ()).is_none(), "nothing installed outside a scope");
        let ((), outer) = scope(EvalContext::default(), || {
            with(|c| c.compile_s += 1.0);
            let ((), inner) = scope(EvalContext::default(), || {
                with(|c| {
                    c.requests += 2;
                    c.host = true;
                    c.kernel_ms += 3.0;
                    c.device_ms = Some(3.0);
                });
            });
            assert_eq!((inner.requests, inner.kernel_ms), (2, 3.0));
            // A collecting scope is apart from the one it is nested in.
            let ((), collected) = scope(EvalContext::collecting(), || {
                assert!(with(|c| c.collecting.is_some()).unwrap());
            });
            assert!(collected.collecting.is_some());
            assert!(with(|c| c.collecting.is_none()).unwrap());
        });
        assert_eq!(
            (outer.requests, outer.host, outer.kernel_ms, outer.compile_s),
            (2, true, 3.0, 1.0)
        );
        assert_eq!(outer.device_ms, Some(3.0));
        assert!(with(|_| ()).is_none());
    }

    #[test]
    fn a_panicking_scope_reinstalls_the_enclosing_context() {
        let ((), outer) = scope(EvalContext::default(), || {
            let r = std::panic::catch_unwind(|| {
                scope(EvalContext::default(), || {
                    with(|c| c.compile_s = 2.0);
                    panic!("boom")
                })
            });
            assert!(r.is_err());
            assert!(with(|c| c.collecting.is_none()).unwrap());
        });
        assert_eq!(outer.compile_s, 2.0);
    }
}
