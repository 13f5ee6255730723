//! # Device identity
//!
//! Tuned configurations are stored per device. For CPU kernels the device is the CPU model and
//! its number of logical cores, e.g. `cpu: AMD EPYC 7B13 x2`. It is computed once per process
//! (reading `/proc/cpuinfo` on Linux), and only when it is needed: a shipped binary whose baked
//! table holds a single device and no portable configurations never asks.
//!
//! `TUNABLE_DEVICE=<name>` replaces the CPU's identity with `<name>` for the whole process: to
//! see what a binary does on a device nobody tuned on (it times the portable configurations, see
//! [`crate::tuner::portable`]), or to keep the entries of machines that share a CPU model apart.

use std::sync::OnceLock;

/// The identity of this machine's CPU, or `TUNABLE_DEVICE` if set (and not empty).
pub fn cpu_device() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        if let Some(name) = std::env::var("TUNABLE_DEVICE")
            .ok()
            .filter(|n| !n.is_empty())
        {
            return name;
        }
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| {
                        l.starts_with("model name")
                            || l.starts_with("Model")
                            || l.starts_with("Hardware")
                    })
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
            })
            .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!("cpu: {model} x{cores}")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_identity_is_stable_and_named() {
        let a = super::cpu_device();
        assert!(a.starts_with("cpu: ") && a.contains(" x"), "{a}");
        assert_eq!(a, super::cpu_device());
    }
}
