//! # Waiting for a launch, with a time limit
//!
//! Without a limit the backend blocks in the driver (`clWaitForEvents`, `cuEventSynchronize`),
//! which costs no CPU: on a CPU OpenCL device such as PoCL a spinning host thread would steal a
//! core from the kernel it is timing. With a limit it polls the event with sleeps that grow from
//! 50 µs to 5 ms.
//!
//! Neither OpenCL nor CUDA can cancel a kernel that is running, so a variant that exceeds the
//! limit is reported as timed out only after the device has finished it (the backend drains the
//! queue before returning, so the next variant starts on an idle device). What the limit saves is
//! the repeated runs of a variant that can never win.

use std::time::{Duration, Instant};

/// Waits for a launch: `block` waits without a limit; with `limit`, `done` is polled until it
/// says the launch finished (`Ok(true)`) or the limit passes (`Ok(false)`).
pub(crate) fn wait_until<E>(
    limit: Option<Duration>,
    mut done: impl FnMut() -> Result<bool, E>,
    block: impl FnOnce() -> Result<(), E>,
) -> Result<bool, E> {
    let Some(limit) = limit else {
        block()?;
        return Ok(true);
    };
    let deadline = Instant::now() + limit;
    let mut nap = Duration::from_micros(50);
    loop {
        if done()? {
            return Ok(true);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
        }
        std::thread::sleep(nap.min(deadline - now));
        nap = (nap * 2).min(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_until_done_or_the_limit() {
        let mut polls = 0;
        let r: Result<bool, ()> = wait_until(
            Some(Duration::from_secs(5)),
            || {
                polls += 1;
                Ok(polls == 3)
            },
            || unreachable!(),
        );
        assert_eq!((r, polls), (Ok(true), 3));
        let t = Instant::now();
        let r: Result<bool, ()> = wait_until(
            Some(Duration::from_millis(20)),
            || Ok(false),
            || unreachable!(),
        );
        assert_eq!(r, Ok(false));
        assert!(t.elapsed() >= Duration::from_millis(20));
        let r: Result<bool, &str> = wait_until(None, || unreachable!(), || Err("lost device"));
        assert_eq!(r, Err("lost device"));
    }
}
