//! # Energy of repeated runs
//!
//! [`measure`] runs a piece of work again and again inside one [`Window`] until a minimum
//! duration has passed and the meter's counter has ticked twice inside it, then divides the
//! window's energy by the runs. Once the minimum has passed, the calling thread samples the
//! meter between runs as well while the window is not ready: a sampling thread starved of a
//! core on a loaded machine then costs a few more runs, not the reading.

use super::{Energy, Failure, Meter, Window};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// The minimum duration of the runs of one measurement that [`measure`] is meant for, as in
/// Kernel Tuner: about a second, ten updates of the coarsest counters (NVML's).
pub const MIN_DURATION: Duration = Duration::from_secs(1);

/// The energy of one run of `work`, measured with `meter` over as many runs as fill `min`
/// (at least one run, and more until the counter has ticked twice after its first update
/// period; [`MIN_DURATION`] is the usual choice).
///
/// The work runs on the calling thread; a run that fails ends the measurement with
/// [`Failure::Run`]. From `min` on, while the window is not ready, the calling thread also
/// samples the meter after each run. A meter that cannot read, or whose counter does not move
/// in `min` plus ten update periods and two samples of the calling thread, gives
/// [`Failure::NotMeasurable`], never an energy of zero.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tunable_runtime::meter::{Fake, Meter, measure};
///
/// let meter: Arc<dyn Meter> = Arc::new(Fake::new(25.0)); // planted: 25 W
/// let energy = measure(&meter, Duration::from_millis(50), &mut || {
///     std::thread::sleep(Duration::from_millis(2)); // one run
///     Ok(())
/// })?;
/// assert!(energy.runs > 1);
/// assert!((energy.power - 25.0).abs() * energy.time.as_secs_f64() <= energy.uncertainty + 1e-9);
/// # Ok::<(), tunable_runtime::meter::Failure>(())
/// ```
pub fn measure(
    meter: &Arc<dyn Meter>,
    min: Duration,
    work: &mut dyn FnMut() -> Result<(), String>,
) -> Result<Energy, Failure> {
    let update = meter.resolution().update;
    let limit = min + update * 10 + Duration::from_millis(100);
    let window = Window::start(Arc::clone(meter))?;
    let mut runs: u32 = 0;
    // The samples this thread took.
    let mut sampled = 0;
    loop {
        work().map_err(Failure::Run)?;
        runs = runs.saturating_add(1);
        let elapsed = window.elapsed();
        if elapsed >= min && !window.ready() {
            window.sample();
            sampled += 1;
        }
        // Past the limit, a window without two ticks ends once this thread has sampled it
        // twice itself: then the counter did not move, not merely a starved sampling thread
        // (a run the machine's load stretched past the limit leaves it no other sample).
        let given_up = elapsed >= limit && sampled >= 2;
        if elapsed >= min && (window.ready() || given_up) || runs == u32::MAX {
            break;
        }
    }
    let reading = window.stop()?;
    // The loop ran the work at least once.
    Ok(reading.per_run(NonZeroU32::new(runs).unwrap_or(NonZeroU32::MIN)))
}
