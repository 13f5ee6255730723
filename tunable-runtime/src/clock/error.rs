//! # Why clocks cannot be set

use std::fmt;

/// Why a device's clocks or power limit cannot be read, checked or set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClockError {
    /// This process may not change the device's settings.
    #[error("{device}: {call} is not permitted: {hint}")]
    NoPermission {
        /// The device.
        device: String,
        /// The call refused.
        call: String,
        /// Who may, and how to get the rights.
        hint: Rights,
    },
    /// The device or driver has no such control.
    #[error("{device} {what}")]
    Unsupported {
        /// The device.
        device: String,
        /// What it lacks.
        what: String,
    },
    /// No device whose clocks can be set: no driver, no NVML, or a kernel that runs on no
    /// CUDA device.
    #[error("clocks cannot be set here: {what}")]
    Unavailable {
        /// Why.
        what: String,
    },
    /// A call failed (a clock the device does not support, say).
    #[error("{device}: {call} failed: {reason}")]
    Failed {
        /// The device.
        device: String,
        /// The call.
        call: String,
        /// Its answer.
        reason: String,
    },
}

/// What the rights to change a GPU's settings take, for [`ClockError::NoPermission`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rights {
    /// Application clocks: root, or an administrator's `nvidia-smi -acp UNRESTRICTED`.
    ApplicationClocks,
    /// Locked clocks or the power limit: root.
    Root,
}

impl fmt::Display for Rights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rights::ApplicationClocks => {
                "changing application clocks needs root; run the tuning as root (`sudo -E`), or \
                 have an administrator open them to other users with `sudo nvidia-smi -i <gpu> \
                 -acp UNRESTRICTED` where the driver still supports it, and keep the driver \
                 loaded with persistence mode (`sudo nvidia-smi -i <gpu> -pm 1`)"
            }
            Rights::Root => {
                "locked clocks and the power limit can be changed by root only; run the tuning \
                 as root (`sudo -E`), on a GPU no one else is using"
            }
        })
    }
}
