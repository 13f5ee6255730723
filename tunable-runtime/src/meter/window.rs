//! # Measurement windows
//!
//! A [`Window`] is open around a set of runs: a thread samples the meter from [`Window::start`]
//! to [`Window::stop`] and notes each tick of its cumulative counter, from which the window's
//! [`Reading`] is estimated as the [meter module](super) describes.
//!
//! The caller may sample too ([`Window::sample`]): on a loaded machine the sampling thread can
//! wait for a core longer than the runs last, and a window it never sampled has no reading.
//! Both take their samples under one lock, so the ticks stay in order whoever took them.

use super::energy::Tick;
use super::{Clocks, Meter, NotMeasurable, Reading, Resolution, Sample};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the clocks are sampled while a window is open.
const CLOCKS_EVERY: Duration = Duration::from_millis(50);

/// A measurement in progress: started before a set of runs, stopped after them.
///
/// ```
/// use std::sync::Arc;
/// use tunable_runtime::meter::{Fake, Meter, Window};
///
/// let meter: Arc<dyn Meter> = Arc::new(Fake::new(40.0)); // planted: 40 W
/// let window = Window::start(meter)?;
/// while !window.ready() {
///     std::thread::sleep(std::time::Duration::from_millis(5)); // the runs
/// }
/// let reading = window.stop()?;
/// assert!((reading.power - 40.0).abs() <= reading.uncertainty / reading.duration.as_secs_f64() + 1e-9);
/// # Ok::<(), tunable_runtime::meter::NotMeasurable>(())
/// ```
#[derive(Debug)]
pub struct Window {
    meter: Arc<dyn Meter>,
    resolution: Resolution,
    start: Instant,
    shared: Arc<Shared>,
    sampler: Option<JoinHandle<()>>,
}

/// What the sampling thread and the window share.
#[derive(Debug)]
struct Shared {
    /// Set by the window to end the sampling.
    stop: AtomicBool,
    /// Ticks seen after the meter's first update period.
    settled: AtomicUsize,
    /// Set when a sample failed.
    failed: AtomicBool,
    state: Mutex<State>,
}

/// What the samples saw.
#[derive(Debug)]
struct State {
    ticks: Vec<Tick>,
    clocks: Vec<(Instant, Clocks)>,
    error: Option<NotMeasurable>,
    /// The previous sample: when it was taken (the middle of its call), how long half its call
    /// took, and what it read.
    previous: (Instant, Duration, Sample),
    /// A power reading integrated since the window opened, in joules.
    integrated: f64,
    /// When the clocks are to be sampled next.
    next_clocks: Instant,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Window {
    /// Opens a window on `meter`: takes a first sample (so a meter that cannot read fails
    /// here), then samples on a thread of its own until [`stop`](Self::stop).
    pub fn start(meter: Arc<dyn Meter>) -> Result<Window, NotMeasurable> {
        let resolution = meter.resolution();
        let first = meter.sample()?;
        let start = Instant::now();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            settled: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            state: Mutex::new(State {
                ticks: Vec::new(),
                clocks: Vec::new(),
                error: None,
                previous: (start, Duration::ZERO, first),
                integrated: 0.0,
                next_clocks: start,
            }),
        });
        let sampler = {
            let (sampled, shared) = (Arc::clone(&meter), Arc::clone(&shared));
            std::thread::Builder::new()
                .name("tunable-meter".into())
                .spawn(move || sample_until_stopped(&*sampled, resolution, &shared, start))
                .map_err(|e| NotMeasurable::Failed {
                    meter: meter.name(),
                    call: "starting the sampling thread".into(),
                    reason: e.to_string(),
                })?
        };
        Ok(Window {
            meter,
            resolution,
            start,
            shared,
            sampler: Some(sampler),
        })
    }

    /// Whether the window holds what a reading needs (two ticks after the meter's first update
    /// period), or a sample failed and more runs would not help.
    pub fn ready(&self) -> bool {
        self.shared.settled.load(Ordering::Acquire) >= 2
            || self.shared.failed.load(Ordering::Acquire)
    }

    /// The time since the window opened.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Samples the meter now, on the calling thread, as the sampling thread does: for a caller
    /// that needs the window to become [`ready`](Self::ready) whether or not that thread gets a
    /// core (see [`measure`](super::measure)). A failed sample ends the window's sampling, as
    /// one on the thread does.
    pub fn sample(&self) {
        if !self.shared.failed.load(Ordering::Acquire) {
            take(&*self.meter, self.resolution, &self.shared, self.start);
        }
    }

    /// Closes the window now and returns its reading, or why there is none (a sample failed,
    /// the counter did not move, or the window was shorter than two of its updates).
    pub fn stop(mut self) -> Result<Reading, NotMeasurable> {
        let stop = Instant::now();
        self.finish();
        let mut state = self.shared.state();
        if let Some(error) = state.error.take() {
            return Err(error);
        }
        let settled = self.start + self.resolution.update;
        let clocks = median(
            state
                .clocks
                .iter()
                .filter(|(at, _)| *at >= settled && *at <= stop)
                .map(|(_, c)| *c),
        );
        Reading::estimate(
            &self.meter.name(),
            self.resolution,
            &state.ticks,
            self.start,
            stop,
            clocks,
        )
    }

    /// Ends the sampling thread and waits for it.
    fn finish(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(sampler) = self.sampler.take()
            && sampler.join().is_err()
        {
            let mut state = self.shared.state();
            state.error.get_or_insert_with(|| NotMeasurable::Failed {
                meter: self.meter.name(),
                call: "sampling".into(),
                reason: "the sampling thread panicked".into(),
            });
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        self.finish();
    }
}

/// How often a meter that updates every `update` is polled: often enough that a tick is seen
/// soon after it happens (a fiftieth of the period), within 1 to 10 ms.
fn poll(update: Duration) -> Duration {
    (update / 50).clamp(Duration::from_millis(1), Duration::from_millis(10))
}

/// The sampling thread: polls `meter` until told to stop or a sample fails.
fn sample_until_stopped(
    meter: &dyn Meter,
    resolution: Resolution,
    shared: &Shared,
    start: Instant,
) {
    let every = poll(resolution.update);
    while !shared.stop.load(Ordering::Acquire) && !shared.failed.load(Ordering::Acquire) {
        std::thread::sleep(every);
        take(meter, resolution, shared, start);
    }
}

/// Takes one sample of `meter`, for the window opened at `start`: notes a tick of its counter
/// (each change of an energy counter; each power reading, integrated by the trapezoid rule)
/// and, now and then, the clocks. The state stays locked from the sample to its tick, so that
/// samples taken on two threads are noted in the order they were taken.
fn take(meter: &dyn Meter, resolution: Resolution, shared: &Shared, start: Instant) {
    let settled = start + resolution.update;
    let failed = |reason: String| NotMeasurable::Failed {
        meter: meter.name(),
        call: "sampling".into(),
        reason,
    };
    let mut state = shared.state();
    let before = Instant::now();
    let now = match meter.sample() {
        Ok(now) => now,
        Err(e) => return fail(shared, &mut state, e),
    };
    let half = before.elapsed() / 2;
    let at = before + half;
    let (was_at, was_half, was) = state.previous;
    let since = at.saturating_duration_since(was_at);
    let tick = match (now, was) {
        (Sample::Energy(e), Sample::Energy(w)) if e < w => {
            let why = failed(format!("the counter went back from {w} J to {e} J"));
            return fail(shared, &mut state, why);
        }
        // The change happened after the previous sample read and, for a counter updated
        // every `update`, within the last update period before this one read.
        (Sample::Energy(e), Sample::Energy(w)) => (e != w).then_some(Tick {
            at,
            energy: e,
            spread: half + (since + was_half).min(resolution.update),
        }),
        (Sample::Power(p), Sample::Power(q)) => {
            state.integrated += (p + q) / 2.0 * since.as_secs_f64();
            Some(Tick {
                at,
                energy: state.integrated,
                spread: half,
            })
        }
        _ => {
            let why = failed(format!("{now:?} after {was:?}: two kinds of sample"));
            return fail(shared, &mut state, why);
        }
    };
    state.previous = (at, half, now);
    if at >= state.next_clocks {
        state.next_clocks = at + CLOCKS_EVERY;
        if let Some(clocks) = meter.clocks() {
            state.clocks.push((at, clocks));
        }
    }
    if let Some(tick) = tick {
        state.ticks.push(tick);
        if tick.at >= settled {
            shared.settled.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Records a failed sample, for [`Window::stop`] to return.
fn fail(shared: &Shared, state: &mut State, error: NotMeasurable) {
    state.error.get_or_insert(error);
    shared.failed.store(true, Ordering::Release);
}

/// The median of each clock, or `None` for no samples.
fn median(clocks: impl Iterator<Item = Clocks>) -> Option<Clocks> {
    let (mut graphics, mut memory): (Vec<u32>, Vec<u32>) =
        clocks.map(|c| (c.graphics_mhz, c.memory_mhz)).unzip();
    if graphics.is_empty() {
        return None;
    }
    graphics.sort_unstable();
    memory.sort_unstable();
    Some(Clocks {
        graphics_mhz: graphics[graphics.len() / 2],
        memory_mhz: memory[memory.len() / 2],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polling_is_a_fiftieth_of_the_update_period_within_1_to_10_ms() {
        assert_eq!(poll(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(poll(Duration::from_millis(100)), Duration::from_millis(2));
        assert_eq!(poll(Duration::from_secs(1)), Duration::from_millis(10));
    }

    #[test]
    fn the_clocks_in_force_are_the_median_of_those_sampled() {
        let c = |g, m| Clocks {
            graphics_mhz: g,
            memory_mhz: m,
        };
        assert_eq!(median(std::iter::empty()), None);
        assert_eq!(
            median([c(1980, 2619), c(1410, 2619), c(1980, 2619)].into_iter()),
            Some(c(1980, 2619))
        );
    }
}
