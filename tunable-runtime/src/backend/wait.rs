//! # Waiting for an OpenCL launch, with a time limit
//!
//! (The CUDA backend always blocks in the driver and judges the limit on the events' time.)
//! Without a limit the backend blocks in the driver (`clWaitForEvents`), which costs no CPU: on a CPU OpenCL device such as PoCL a spinning host thread would steal a
//! core from the kernel it is timing. With a limit it polls the event with sleeps that grow from
//! 50 µs to 5 ms. The limit counts from when the kernel is seen running, not from the launch: an
//! OpenCL command may wait in the queue while the driver finishes compiling it for its
//! work-group size (PoCL does), which is not the kernel's time.
//!
//! Neither OpenCL nor CUDA can cancel a kernel that is running, so a variant that exceeds the
//! limit is reported as timed out only after the device has finished it (the backend drains the
//! queue before returning, so the next variant starts on an idle device). What the limit saves is
//! the repeated runs of a variant that can never win.

use std::time::{Duration, Instant};

/// Where a launch is, as its event tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Queued or being prepared, not running yet (only OpenCL's events tell).
    #[cfg_attr(not(feature = "opencl"), allow(dead_code))]
    Waiting,
    /// Running (or, where the API cannot tell, not finished).
    Running,
    /// Finished.
    Done,
}

/// Waits for a launch: `block` waits without a limit; with `limit`, `status` is polled until it
/// says the launch finished (`Ok(true)`) or it has been running for longer than the limit
/// (`Ok(false)`).
pub(crate) fn wait_until<E>(
    limit: Option<Duration>,
    status: impl FnMut() -> Result<Status, E>,
    block: impl FnOnce() -> Result<(), E>,
) -> Result<bool, E> {
    let Some(limit) = limit else {
        block()?;
        return Ok(true);
    };
    let start = Instant::now();
    poll(limit, status, || start.elapsed(), std::thread::sleep)
}

/// Polls `status` until the launch is done (`Ok(true)`) or has been running for longer than
/// `limit` (`Ok(false)`), reading the time from `now` and napping with `nap` between polls (the
/// naps grow from 50 µs to 5 ms).
fn poll<E>(
    limit: Duration,
    mut status: impl FnMut() -> Result<Status, E>,
    mut now: impl FnMut() -> Duration,
    mut nap: impl FnMut(Duration),
) -> Result<bool, E> {
    let mut deadline = None;
    let mut pause = Duration::from_micros(50);
    loop {
        let t = now();
        match status()? {
            Status::Done => return Ok(true),
            Status::Running => {
                if t >= *deadline.get_or_insert(t + limit) {
                    return Ok(false);
                }
            }
            Status::Waiting => {}
        }
        nap(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that moves only when the poller naps.
    struct Clock(Cell<Duration>);

    impl Clock {
        fn new() -> Self {
            Clock(Cell::new(Duration::ZERO))
        }
        fn now(&self) -> Duration {
            self.0.get()
        }
        fn nap(&self, d: Duration) {
            self.0.set(self.0.get() + d);
        }
    }

    #[test]
    fn polls_until_done_or_the_limit() {
        let clock = Clock::new();
        let mut polls = 0;
        let r: Result<bool, ()> = poll(
            Duration::from_millis(20),
            || {
                polls += 1;
                Ok(if polls == 3 {
                    Status::Done
                } else {
                    Status::Running
                })
            },
            || clock.now(),
            |d| clock.nap(d),
        );
        assert_eq!((r, polls), (Ok(true), 3));

        let clock = Clock::new();
        let r: Result<bool, ()> = poll(
            Duration::from_millis(20),
            || Ok(Status::Running),
            || clock.now(),
            |d| clock.nap(d),
        );
        assert_eq!(r, Ok(false));
        assert!(clock.now() >= Duration::from_millis(20));
        assert!(clock.now() < Duration::from_millis(20 + 5 + 5));

        let r: Result<bool, &str> = wait_until(None, || unreachable!(), || Err("lost device"));
        assert_eq!(r, Err("lost device"));
        let r: Result<bool, &str> = wait_until(None, || unreachable!(), || Ok(()));
        assert_eq!(r, Ok(true));
    }

    #[test]
    fn time_waiting_in_the_queue_does_not_count() {
        // Queued for 40 ms, then running for 10 ms under a limit of 20 ms: finished in time.
        let clock = Clock::new();
        let r: Result<bool, ()> = poll(
            Duration::from_millis(20),
            || {
                let t = clock.now();
                Ok(if t < Duration::from_millis(40) {
                    Status::Waiting
                } else if t < Duration::from_millis(50) {
                    Status::Running
                } else {
                    Status::Done
                })
            },
            || clock.now(),
            |d| clock.nap(d),
        );
        assert_eq!(r, Ok(true));
        // Running for longer than the limit once it left the queue: timed out.
        let clock = Clock::new();
        let r: Result<bool, ()> = poll(
            Duration::from_millis(20),
            || {
                Ok(if clock.now() < Duration::from_millis(40) {
                    Status::Waiting
                } else {
                    Status::Running
                })
            },
            || clock.now(),
            |d| clock.nap(d),
        );
        assert_eq!(r, Ok(false));
        assert!(clock.now() >= Duration::from_millis(60));
    }
}
