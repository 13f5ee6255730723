//! # Readings
//!
//! What a [`Window`](super::Window) measured ([`Reading`]), what that is per run ([`Energy`]),
//! and the one estimate that turns the counter's ticks into them.

use super::{Clocks, NotMeasurable, Resolution};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// A moment the cumulative counter was seen to change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tick {
    /// When the change was seen.
    pub(crate) at: Instant,
    /// The counter after the change, in joules.
    pub(crate) energy: f64,
    /// How far `at` may be from the moment of the change.
    pub(crate) spread: Duration,
}

/// What a window measured: its energy, mean power and duration, with the uncertainty of the
/// energy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// The energy of the whole window, in joules: its mean power times its duration.
    pub energy: f64,
    /// How far [`energy`](Self::energy) may be off, in joules (±): the counter's quantum, the
    /// timing of its ticks and the sensor's stated accuracy, where stated
    /// ([`Resolution::accuracy`]).
    pub uncertainty: f64,
    /// The mean power, in watts, between the first and last ticks inside the window.
    pub power: f64,
    /// The window's length.
    pub duration: Duration,
    /// The clocks in force (the median of those sampled inside the window), where the device
    /// reports them.
    pub clocks: Option<Clocks>,
    /// The meter's resolution.
    pub resolution: Resolution,
}

/// The energy of one run of repeated runs: a [`Reading`] divided by the number of runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Energy {
    /// The energy of one run, in joules (the window's energy over the runs, so that what the
    /// device draws between runs is shared among them).
    pub per_run: f64,
    /// How far [`per_run`](Self::per_run) may be off, in joules (±).
    pub uncertainty: f64,
    /// The mean power over the runs, in watts.
    pub power: f64,
    /// The wall time of one run (the window's length over the runs).
    pub time: Duration,
    /// The number of runs.
    pub runs: u32,
    /// The clocks in force, where the device reports them.
    pub clocks: Option<Clocks>,
}

impl Reading {
    /// The reading of a window from `start` to `stop` of the meter called `meter`, from the
    /// `ticks` its sampler saw: the mean power between the first tick after the meter's first
    /// update period and the last tick before `stop`, times the window's length.
    pub(crate) fn estimate(
        meter: &str,
        resolution: Resolution,
        ticks: &[Tick],
        start: Instant,
        stop: Instant,
        clocks: Option<Clocks>,
    ) -> Result<Reading, NotMeasurable> {
        let duration = stop.saturating_duration_since(start);
        let settled = start + resolution.update;
        let inside: Vec<&Tick> = ticks
            .iter()
            .filter(|t| t.at >= settled && t.at <= stop)
            .collect();
        let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
            return Err(too_short(meter, resolution, ticks, start, stop, 0));
        };
        let between = last.at.saturating_duration_since(first.at).as_secs_f64();
        let energy = last.energy - first.energy;
        if inside.len() < 2 || between <= 0.0 {
            return Err(too_short(
                meter,
                resolution,
                ticks,
                start,
                stop,
                inside.len(),
            ));
        }
        if energy <= 0.0 {
            return Err(NotMeasurable::Stalled {
                meter: meter.to_owned(),
                waited: duration,
            });
        }
        let power = energy / between;
        // The ticks' times may be off by their spreads: the true time between them is within
        // `timing` of the measured one, relatively, so the power within timing / (1 - timing)
        // of the one measured.
        let timing = (first.spread + last.spread).as_secs_f64() / between;
        let timing = if timing < 1.0 {
            timing / (1.0 - timing)
        } else {
            f64::INFINITY
        };
        let relative =
            resolution.accuracy.unwrap_or(0.0) + 2.0 * resolution.quantum / energy + timing;
        let energy = power * duration.as_secs_f64();
        Ok(Reading {
            energy,
            uncertainty: relative * energy,
            power,
            duration,
            clocks,
            resolution,
        })
    }

    /// The energy of one of `runs` runs that filled the window.
    pub fn per_run(&self, runs: NonZeroU32) -> Energy {
        let n = runs.get();
        Energy {
            per_run: self.energy / f64::from(n),
            uncertainty: self.uncertainty / f64::from(n),
            power: self.power,
            time: self.duration / n,
            runs: n,
            clocks: self.clocks,
        }
    }
}

/// Why a window holding fewer than two usable ticks has no reading: the counter never changed
/// in it ([`NotMeasurable::Stalled`]), or the window was shorter than the counter's pace.
fn too_short(
    meter: &str,
    resolution: Resolution,
    ticks: &[Tick],
    start: Instant,
    stop: Instant,
    usable: usize,
) -> NotMeasurable {
    let window = stop.saturating_duration_since(start);
    if !ticks.iter().any(|t| t.at > start && t.at <= stop) {
        NotMeasurable::Stalled {
            meter: meter.to_owned(),
            waited: window,
        }
    } else {
        NotMeasurable::TooShort {
            meter: meter.to_owned(),
            update: resolution.update,
            window,
            ticks: usable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Ticks every `every` ms from `from` ms to `to` ms after `t0`, of a counter rising at
    /// `watts`, each seen `spread` ms late at most.
    fn ticks(t0: Instant, from: u32, to: u32, every: u32, watts: f64, spread: u32) -> Vec<Tick> {
        (from..=to)
            .step_by(every as usize)
            .map(|ms| Tick {
                at: t0 + MS * ms,
                energy: 100.0 + watts * f64::from(ms) / 1e3,
                spread: MS * spread,
            })
            .collect()
    }

    /// The reading of a window of `window` ms from `t0`, of a meter updating every `update` ms
    /// in steps of `quantum` J with the stated `accuracy`.
    fn estimate(
        seen: &[Tick],
        t0: Instant,
        window: u32,
        (update, quantum, accuracy): (u32, f64, Option<f64>),
    ) -> Result<Reading, NotMeasurable> {
        let resolution = Resolution {
            quantum,
            update: MS * update,
            accuracy,
        };
        Reading::estimate("m", resolution, seen, t0, t0 + MS * window, None)
    }

    #[test]
    fn power_is_the_slope_between_the_settled_ticks_and_energy_spans_the_window() {
        let t0 = Instant::now();
        // A counter at 250 W updating every 100 ms; the window runs 1000 ms.
        let seen = ticks(t0, 0, 1100, 100, 250.0, 0);
        let r = estimate(&seen, t0, 1000, (100, 1e-3, None)).unwrap();
        assert!((r.power - 250.0).abs() < 1e-9, "{r:?}");
        assert!((r.energy - 250.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.duration, MS * 1000);
        // Two quanta over the 225 J between the ticks at 100 and 1000 ms.
        let relative = r.uncertainty / r.energy;
        assert!((relative - 2e-3 / 225.0).abs() < 1e-12, "{r:?}");
        let e = r.per_run(NonZeroU32::new(50).unwrap());
        assert!((e.per_run - 5.0).abs() < 1e-9);
        assert_eq!(e.time, MS * 20);
        assert_eq!(e.runs, 50);
        assert!((e.uncertainty * 50.0 - r.uncertainty).abs() < 1e-12);
    }

    #[test]
    fn the_first_update_period_is_left_out() {
        let t0 = Instant::now();
        // 1000 W during the first 100 ms (a lagging counter's leftover), 100 W after.
        let lag = Tick {
            at: t0 + MS * 50,
            energy: 50.0,
            spread: Duration::ZERO,
        };
        let after = ticks(t0, 100, 600, 100, 100.0, 0);
        let seen: Vec<Tick> = std::iter::once(lag)
            .chain(after.into_iter().map(|t| Tick {
                energy: t.energy - 10.0,
                ..t
            }))
            .collect();
        let r = estimate(&seen, t0, 600, (100, 0.0, None)).unwrap();
        assert!((r.power - 100.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn tick_timing_and_stated_accuracy_add_to_the_uncertainty() {
        let t0 = Instant::now();
        let seen = ticks(t0, 0, 1000, 10, 100.0, 2);
        let r = estimate(&seen, t0, 1000, (10, 0.0, Some(0.05))).unwrap();
        // 5% stated, plus 2 ms at each end over the 990 ms between the ticks at 10 and 1000 ms.
        let timing = 4.0 / 990.0;
        let expected = 0.05 + timing / (1.0 - timing);
        assert!((r.uncertainty / r.energy - expected).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn a_window_without_two_settled_ticks_is_too_short_and_one_without_any_is_stalled() {
        let t0 = Instant::now();
        let seen = ticks(t0, 0, 1000, 100, 100.0, 0);
        let short = estimate(&seen, t0, 150, (100, 0.0, None));
        let short_ok = matches!(short, Err(NotMeasurable::TooShort { ticks: 1, .. }));
        assert!(short_ok, "{short:?}");
        let none = estimate(&[], t0, 500, (100, 0.0, None));
        assert!(
            matches!(none, Err(NotMeasurable::Stalled { .. })),
            "{none:?}"
        );
    }

    #[test]
    fn a_counter_that_did_not_rise_gives_no_reading() {
        let t0 = Instant::now();
        let flat = ticks(t0, 0, 500, 100, 0.0, 0);
        let r = estimate(&flat, t0, 500, (100, 0.0, None));
        assert!(matches!(r, Err(NotMeasurable::Stalled { .. })), "{r:?}");
    }
}
