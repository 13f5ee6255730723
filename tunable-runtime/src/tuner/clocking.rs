//! # The clock control of a tuning
//!
//! A tuning whose space has clock parameters ([`tunable_search::clock`]) selects the control
//! of its device's settings once, before any evaluation: NVML on the CUDA device the kernel's
//! backend runs on, held by a [`Guard`] that reads the settings in force
//! and checks the rights when it is opened (a tuning without them fails before its first
//! evaluation, and before its journal is opened). The [`Clocking`] travels in the tuning's
//! options and evaluation context
//! ([`EvalContext::clocks`](crate::evaluation::EvalContext::clocks)), from which each
//! configuration's clocks are applied before it is measured; the settings are restored when
//! the last hold on the guard is dropped (the first-run hook: when the call's tuning ends),
//! when a panic unwinds through it, or on Ctrl-C.

use super::planted::{Planted, Slot};
use crate::RuntimeError;
use crate::clock::{ClockControl, ClockError, Guard, Knob, Setting};
use std::cell::RefCell;
use std::sync::Arc;
use tunable_search::Space;

/// A tuning's hold on its device's clocks, and the space's clock parameters. Clones share the
/// hold: the settings in force before are restored when the last one is dropped.
#[derive(Clone, Debug)]
pub struct Clocking {
    /// The hold: the control, and the settings to restore.
    pub guard: Arc<Guard>,
    /// The clock parameters of the space, by position among its parameters.
    pub knobs: Vec<(usize, Knob)>,
}

impl PartialEq for Clocking {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.guard, &other.guard) && self.knobs == other.knobs
    }
}

impl Clocking {
    /// Takes the hold on `control` for the clock parameters of `space`: reads the settings in
    /// force and checks that this process may change them ([`Guard::open`]); nothing is
    /// changed yet.
    pub fn open(control: Arc<dyn ClockControl>, space: &Space) -> Result<Clocking, RuntimeError> {
        let knobs = knobs(space);
        let tuned: Vec<Knob> = knobs.iter().map(|k| k.1).collect();
        let guard = Guard::open(control, &tuned).map_err(RuntimeError::Clocks)?;
        Ok(Clocking {
            guard: Arc::new(guard),
            knobs,
        })
    }

    /// Applies the clocks of the configuration at `position` of `space`; an error is that
    /// configuration's failure, with its reason.
    pub fn apply(&self, space: &Space, position: usize) -> Result<(), String> {
        let setting = self.setting(space, position);
        self.guard
            .apply(&setting)
            .map_err(|e| format!("clocks ({setting}): {e}"))
    }

    /// The setting of the configuration at `position` of `space`.
    pub fn setting(&self, space: &Space, position: usize) -> Setting {
        let values = space.values(position);
        let params = space.params();
        Setting::of(
            self.knobs
                .iter()
                .map(|&(i, _)| (params[i].name(), &values[i])),
        )
    }
}

/// The clock parameters of `space`, by position among its parameters.
pub fn knobs(space: &Space) -> Vec<(usize, Knob)> {
    space
        .params()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, Knob::of_name(p.name())?)))
        .collect()
}

thread_local! {
    /// A control a test planted for the tunings on this thread.
    static PLANTED: Slot<Arc<dyn ClockControl>> = const { RefCell::new(None) };
}

/// Plants `control` (a [`Fake`](crate::clock::Fake)) for the tunings on this thread until the
/// guard is dropped. For tests only: a real run never plants one, and [`select`] takes a
/// planted control before any real one.
#[doc(hidden)]
pub fn plant(control: Arc<dyn ClockControl>) -> Planted<Arc<dyn ClockControl>> {
    super::planted::plant(&PLANTED, control)
}

/// The hold on the clocks of a tuning over `space`: none without clock parameters; else on a
/// planted control (tests), else on NVML of CUDA device `cuda`, the device the kernel's backend
/// ran on ([`Clocking::open`]: the settings read, the rights checked); else the error that says
/// why none can set them. Changes nothing yet.
pub fn select(space: &Space, cuda: Option<usize>) -> Result<Option<Clocking>, RuntimeError> {
    let knobs = knobs(space);
    if knobs.is_empty() {
        return Ok(None);
    }
    let control = match (PLANTED.with_borrow(Clone::clone), cuda) {
        (Some(planted), _) => planted,
        #[cfg(feature = "cuda")]
        (None, Some(ordinal)) => crate::clock::for_cuda_device(ordinal)?,
        _ => {
            return Err(ClockError::Unavailable {
                what: "clock parameters are set through NVML on the CUDA device the kernel runs \
                       on, and this kernel asked the CUDA backend for no kernel"
                    .to_owned(),
            }
            .into());
        }
    };
    #[cfg(not(feature = "cuda"))]
    let _ = cuda;
    Clocking::open(control, space).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Fake;
    use crate::clock::fake::Event;
    use crate::measure::{Repeats, report_device_time};
    use crate::tuner::{Call, Evaluation, Progress, TuneOptions, Variants, panic, tune};
    use std::cell::RefCell;
    use tunable_search::strategy::Trial;
    use tunable_search::{SpaceBuilder, Value};

    use crate::tuner::testing::{Clocked, clocked_space as space};

    /// Exhaustive over [`space`] with `control`, every configuration a fake kernel that notes
    /// the clock in force at each of its runs; tile `panics` panics. The report (or the
    /// tuner's error) and the (configuration, clock in force) of every run.
    fn tuning(
        fake: &Arc<Fake>,
        panics: Option<i64>,
    ) -> (
        Result<crate::tuner::TuneReport, RuntimeError>,
        Vec<(Clocked, u32)>,
    ) {
        tuning_with(fake, panics, "exhaustive", 6)
    }

    /// [`tuning`] with another strategy and budget, for time.
    fn tuning_with(
        fake: &Arc<Fake>,
        panics: Option<i64>,
        strategy: &str,
        budget: usize,
    ) -> (
        Result<crate::tuner::TuneReport, RuntimeError>,
        Vec<(Clocked, u32)>,
    ) {
        let space = space();
        let runs = RefCell::new(Vec::new());
        let mut run = |call: Call<'_, Clocked>| match call {
            Call::Run(&p) => {
                runs.borrow_mut().push((p, fake.graphics_mhz()));
                if Some(p.0) == panics {
                    panic!("boom");
                }
                report_device_time(10.0 / p.0 as f64);
                Ok(None)
            }
            Call::Output | Call::Answer => Ok(None),
        };
        let mut variants = Variants::new(&space, &mut run, None, Repeats::new(1, 2));
        let opts = TuneOptions {
            budget,
            strategy: strategy.into(),
            clocks: select_planted(&space, fake).unwrap(),
            ..TuneOptions::default()
        };
        let report = tune(&space, &opts, &mut variants, &mut []);
        // The hold ends with the options: the settings in force before come back.
        drop(opts);
        drop(variants);
        (report, runs.into_inner())
    }

    fn select_planted(space: &Space, fake: &Arc<Fake>) -> Result<Option<Clocking>, RuntimeError> {
        let _planted = plant(Arc::clone(fake) as Arc<dyn ClockControl>);
        select(space, None)
    }

    #[test]
    fn each_configuration_runs_at_its_clocks_and_the_clocks_in_force_come_back() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let fake = Arc::new(Fake::new());
        let (report, runs) = tuning(&fake, None);
        let report = report.unwrap();
        assert_eq!(report.evaluations, 6);
        // Every run, the warm-up included, ran at its configuration's clock.
        assert_eq!(runs.len(), 6 * 3);
        for (p, mhz) in &runs {
            assert_eq!(i64::from(*mhz), p.1, "{runs:?}");
        }
        // Set once per configuration, in order; restored once, at the end.
        let events = fake.events();
        assert_eq!(events.len(), 7, "{events:?}");
        assert_eq!(events.last(), Some(&Event::Restore));
        assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
        assert_eq!(fake.in_force(), Fake::new().in_force());
    }

    #[test]
    fn for_time_auto_holds_the_clock_at_its_highest_level_then_lowers_the_best() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let fake = Arc::new(Fake::new());
        let (report, runs) = tuning_with(&fake, None, "auto", 4);
        assert_eq!(report.unwrap().evaluations, 4);
        // Each configuration's first run (its warm-up), in the order evaluated.
        let mut evaluated: Vec<(i64, u32)> = Vec::new();
        for (p, mhz) in &runs {
            if evaluated
                .last()
                .is_none_or(|&(tile, clock)| (tile, clock) != (p.0, *mhz))
            {
                evaluated.push((p.0, *mhz));
            }
        }
        // The three tiles at 1400 MHz; then the fastest, tile 3, one level lower.
        let mut first: Vec<i64> = evaluated[..3].iter().map(|&(tile, _)| tile).collect();
        first.sort_unstable();
        assert_eq!(first, [1, 2, 3], "{evaluated:?}");
        assert!(
            evaluated[..3].iter().all(|&(_, mhz)| mhz == 1400),
            "{evaluated:?}"
        );
        assert_eq!(evaluated[3], (3, 900), "{evaluated:?}");
    }

    #[test]
    fn the_clocks_come_back_after_a_panic_in_a_kernel_or_in_the_tuning() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        // A kernel's panic is its configuration's failure: the tuning goes on, then restores.
        let fake = Arc::new(Fake::new());
        let (report, runs) = tuning(&fake, Some(2));
        let report = report.unwrap();
        assert_eq!(report.failures.len(), 2, "{:?}", report.failures);
        assert!(
            runs.iter()
                .any(|(p, mhz)| p.0 == 3 && i64::from(*mhz) == p.1)
        );
        assert_eq!(fake.events().last(), Some(&Event::Restore));
        assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
        // A panic out of the tuning itself (here an observer's) unwinds through the guard.
        let fake = Arc::new(Fake::new());
        let space = space();
        let mut seen = 0;
        let mut observer = |_: &Progress, _: &Trial, _: &Evaluation| {
            seen += 1;
            assert!(seen < 3, "the observer gives up");
        };
        let mut run = |call: Call<'_, Clocked>| match call {
            Call::Run(_) => Ok(None),
            Call::Output | Call::Answer => Ok(None),
        };
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let opts = TuneOptions {
                budget: 6,
                strategy: "exhaustive".into(),
                clocks: select_planted(&space, &fake).unwrap(),
                ..TuneOptions::default()
            };
            let mut variants = Variants::new(&space, &mut run, None, Repeats::new(0, 1));
            tune(&space, &opts, &mut variants, &mut [&mut observer])
        }));
        assert!(unwound.is_err());
        assert!(fake.events().len() >= 3, "{:?}", fake.events());
        assert_eq!(fake.events().last(), Some(&Event::Restore));
        assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
    }

    #[test]
    fn a_clock_the_device_refuses_is_that_configurations_failure() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let fake = Arc::new(Fake::new().unsupported(900));
        let (report, runs) = tuning(&fake, None);
        let report = report.unwrap();
        assert_eq!(report.failures.len(), 3, "{:?}", report.failures);
        assert!(
            report.failures[0]
                .1
                .starts_with("clocks (nvml_gr_clock=900 MHz): "),
            "{:?}",
            report.failures
        );
        assert!(runs.iter().all(|(p, _)| p.1 == 1400));
        assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
    }

    #[test]
    fn without_the_rights_the_hold_is_refused_saying_how_to_get_them() {
        let fake = Arc::new(Fake::new().denied());
        let e = select_planted(&space(), &fake).unwrap_err();
        assert!(
            matches!(e, RuntimeError::Clocks(ClockError::NoPermission { .. })),
            "{e}"
        );
        let message = e.to_string();
        assert!(
            message.starts_with("cannot tune clock parameters: "),
            "{message}"
        );
        assert!(message.contains("root"), "{message}");
        assert!(fake.events().is_empty());
    }

    #[test]
    fn only_a_space_with_clock_parameters_takes_a_control_and_only_from_a_cuda_device() {
        let plain = SpaceBuilder::new().param("tile", [1, 2]).build().unwrap();
        assert_eq!(select(&plain, Some(0)).unwrap(), None);
        assert!(knobs(&plain).is_empty());
        let space = space();
        assert_eq!(knobs(&space), [(1, Knob::Graphics)]);
        let e = select(&space, None).unwrap_err();
        assert!(
            matches!(e, RuntimeError::Clocks(ClockError::Unavailable { .. })),
            "{e}"
        );
        let fake = Arc::new(Fake::new());
        let c = select_planted(&space, &fake).unwrap().unwrap();
        assert_eq!(c.knobs, [(1, Knob::Graphics)]);
        let s = c.setting(
            &space,
            space
                .position_of_values(&[Value::Int(2), Value::Int(900)])
                .unwrap(),
        );
        assert_eq!(
            s,
            Setting {
                graphics_mhz: Some(900),
                ..Setting::default()
            }
        );
    }
}
