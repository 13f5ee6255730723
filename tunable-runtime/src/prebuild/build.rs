//! # A build handed over
//!
//! What a backend hands the tuner while it collects instead of building ([`super::collect`]):
//! a leaf of its own, as the evaluation context holds the builds and the pool runs them.

/// One build handed over by a backend while the tuner collects.
pub struct Build {
    work: Box<dyn FnOnce() + Send>,
    host: bool,
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Build").field("host", &self.host).finish()
    }
}

impl Build {
    /// A build, for a device that runs on the host's cores (`host`: PoCL, say) or not.
    pub fn new(host: bool, work: impl FnOnce() + Send + 'static) -> Self {
        Build {
            work: Box::new(work),
            host,
        }
    }

    /// Whether the device runs on the host's cores: its batch is built before it is timed.
    pub fn host(&self) -> bool {
        self.host
    }

    /// Runs the build. A panicking build is the backend's bug; it must not stop the pool's
    /// other builds, so the panic ends here.
    pub(crate) fn run(self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(self.work));
    }
}
