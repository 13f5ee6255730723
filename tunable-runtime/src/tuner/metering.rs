//! # The meter of a tuning
//!
//! A tuning whose goal needs energy ([`Goal::needs_energy`]) selects its meter once,
//! before any evaluation: the meter of the CUDA device the kernel's backend runs on (NVML), or
//! that of the CPU packages (RAPL) for a kernel that names no device. Where none can read, the
//! tuning fails with the reason ([`RuntimeError::NotMeasurable`]) instead of tuning on zeros.
//!
//! The selected [`Metering`] travels in the tuning's evaluation context
//! ([`crate::evaluation::EvalContext::meter`]); each configuration that was timed and passed
//! `verify` is then run again while the meter reads ([`crate::meter::measure`]).

use super::planted::{Planted, Slot};
use crate::RuntimeError;
use crate::meter::{self, Meter, NotMeasurable};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use tunable_search::objective::Goal;

/// The meter of a tuning, how long each reading lasts at least, and the journal's names for
/// what it reads.
#[derive(Clone, Debug)]
pub struct Metering {
    /// The meter.
    pub meter: Arc<dyn Meter>,
    /// The least duration of one configuration's repeated runs ([`meter::measure`]).
    pub min: Duration,
    /// The prefix of the journal's energy and power fields: `nvml` (Kernel Tuner's
    /// `nvml_energy`, `nvml_power`, so that caches interoperate), `rapl`, or `fake`.
    pub prefix: &'static str,
}

impl PartialEq for Metering {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.meter, &other.meter) && self.min == other.min
    }
}

impl Metering {
    /// The journal's name of the energy field (`nvml_energy`).
    pub fn energy_field(&self) -> String {
        format!("{}_energy", self.prefix)
    }

    /// The journal's name of the power field (`nvml_power`).
    pub fn power_field(&self) -> String {
        format!("{}_power", self.prefix)
    }
}

thread_local! {
    /// A meter a test planted for the tunings on this thread.
    static PLANTED: Slot<Arc<dyn Meter>> = const { RefCell::new(None) };
}

/// Plants `meter` (a [`Fake`](crate::meter::Fake)) for the tunings on this thread until the
/// guard is dropped. For tests only: a real run never plants one, and [`select`] takes a
/// planted meter before any real one.
#[doc(hidden)]
pub fn plant(meter: Arc<dyn Meter>) -> Planted<Arc<dyn Meter>> {
    super::planted::plant(&PLANTED, meter)
}

/// The meter of a tuning for `goal`: none for time; for a goal that needs energy, a planted
/// meter (tests), else that of CUDA device `cuda` when the kernel's backend named one, else for
/// a kernel that names no device the CPU's, else none can read. `min` is how long each
/// reading lasts at least.
pub fn select(
    goal: &Goal,
    device_given: bool,
    cuda: Option<usize>,
    min: Duration,
) -> Result<Option<Metering>, RuntimeError> {
    if !goal.needs_energy() {
        return Ok(None);
    }
    let failed = |reason| RuntimeError::NotMeasurable {
        objective: goal.to_string(),
        reason,
    };
    if let Some(meter) = PLANTED.with_borrow(Clone::clone) {
        return Ok(Some(Metering {
            meter,
            min,
            prefix: "fake",
        }));
    }
    let (meter, prefix) = match cuda {
        #[cfg(feature = "cuda")]
        Some(ordinal) => (meter::for_cuda_device(ordinal).map_err(failed)?, "nvml"),
        #[cfg(not(feature = "cuda"))]
        Some(_) => unreachable!("only the CUDA backend names a CUDA device"),
        None if !device_given => (meter::for_cpu().map_err(failed)?, "rapl"),
        None => {
            return Err(failed(NotMeasurable::Unsupported {
                meter: "the kernel's device".to_owned(),
                what: "has no energy meter tunable reads (NVML for CUDA devices, RAPL for the \
                       CPU)"
                    .to_owned(),
            }));
        }
    };
    Ok(Some(Metering { meter, min, prefix }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Fake;
    use tunable_search::objective::Objective;

    #[test]
    fn time_needs_no_meter_and_a_planted_one_is_taken_while_planted() {
        let min = Duration::from_millis(5);
        assert_eq!(select(&Goal::default(), false, None, min).unwrap(), None);
        let fake: Arc<dyn Meter> = Arc::new(Fake::new(3.0));
        {
            let _planted = plant(Arc::clone(&fake));
            let m = select(&Objective::Energy.into(), true, None, min)
                .unwrap()
                .unwrap();
            assert!(Arc::ptr_eq(&m.meter, &fake));
            assert_eq!(m.energy_field(), "fake_energy");
        }
        // Lifted: a GPU kernel without a CUDA device has no meter, and says why.
        let e = select(&Objective::Edp.into(), true, None, min).unwrap_err();
        assert!(matches!(e, RuntimeError::NotMeasurable { .. }), "{e}");
        assert!(e.to_string().contains("not measurable here"), "{e}");
    }

    #[test]
    fn the_cpus_meter_or_why_it_cannot_read() {
        // Real: RAPL where this process may read it, else the reason, never a zero.
        match select(
            &Objective::Energy.into(),
            false,
            None,
            Duration::from_millis(5),
        ) {
            Ok(m) => assert_eq!(m.unwrap().prefix, "rapl"),
            Err(RuntimeError::NotMeasurable { objective, reason }) => {
                assert_eq!(objective, "energy");
                assert_eq!(Some(reason), crate::meter::for_cpu().err());
            }
            Err(e) => panic!("{e}"),
        }
    }
}
