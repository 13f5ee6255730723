//! # CPU energy: RAPL through Linux powercap
//!
//! Intel's Running Average Power Limit counters (and AMD's, which the same Linux driver exposes
//! on recent kernels) appear under `/sys/class/powercap` as zones: `intel-rapl:N` for package
//! `N` (file `name` holds `package-N`), with subzones `intel-rapl:N:M` for its cores, uncore or
//! DRAM. Each zone's `energy_uj` is a cumulative counter in microjoules that wraps around after
//! `max_energy_range_uj`. The meter adds every package zone and every DRAM subzone (DRAM is not
//! part of the package); it leaves out the core and uncore subzones (inside the package), the
//! platform zone `psys` (which holds the packages) and the `intel-rapl-mmio` duplicates.
//!
//! - **What it covers:** whole packages, so whatever else runs on the machine is counted too.
//! - **Resolution:** the counter updates about every millisecond ("Measuring Energy Consumption
//!   for Short Code Paths Using RAPL", Hähnel et al.); its energy unit is set in
//!   `MSR_RAPL_POWER_UNIT`, which powercap does not show: Intel's default is 2⁻¹⁶ J (15.3 µJ),
//!   taken as the quantum. Intel states no accuracy.
//! - **Rights:** since Linux 5.10 `energy_uj` is readable by root only (the PLATYPUS power side
//!   channel, CVE-2020-8694); an administrator can open it to others until the next boot.
//! - **Wraparound:** the 32-bit hardware counter wraps after a few minutes at full load; the
//!   meter is sampled every millisecond or so while a window is open, so at most one wrap
//!   falls between two samples, and it is added back.

use super::{Meter, NotMeasurable, Resolution, Sample};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Where Linux shows its powercap zones.
pub const POWERCAP: &str = "/sys/class/powercap";

/// The energy of this machine's CPU packages (and their DRAM), read from RAPL's powercap zones.
#[derive(Debug)]
pub struct Rapl {
    zones: Vec<Zone>,
    counts: Mutex<Vec<Count>>,
}

/// One powercap zone the meter adds.
#[derive(Clone, Debug)]
struct Zone {
    /// `package-0`, `package-0 dram`.
    name: String,
    /// Its `energy_uj`.
    energy: PathBuf,
    /// Its `max_energy_range_uj`: the counter wraps around to 0 after it.
    range: u64,
}

/// A zone's counter as last read, and what it has counted since the meter was made.
#[derive(Clone, Copy, Debug)]
struct Count {
    last: u64,
    total: u64,
}

impl Rapl {
    /// The meter of the zones under [`POWERCAP`].
    pub fn new() -> Result<Rapl, NotMeasurable> {
        Rapl::at(Path::new(POWERCAP))
    }

    /// The meter of the zones under `root` (another powercap tree, a test's copy): every
    /// package zone and DRAM subzone, each read once here so that a counter this process may
    /// not read fails now.
    pub fn at(root: &Path) -> Result<Rapl, NotMeasurable> {
        let entries = std::fs::read_dir(root).map_err(|e| unreadable(root, &e))?;
        let mut dirs: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
            .collect();
        dirs.sort();
        let mut zones = Vec::new();
        for (dir, path) in dirs {
            let Some(place) = dir.strip_prefix("intel-rapl:") else {
                continue;
            };
            let Ok(name) = std::fs::read_to_string(path.join("name")) else {
                continue;
            };
            let name = name.trim();
            let name = match place.split(':').collect::<Vec<_>>()[..] {
                [package] if digits(package) && name.starts_with("package") => name.to_owned(),
                [package, sub] if digits(package) && digits(sub) && name == "dram" => {
                    format!("package-{package} dram")
                }
                _ => continue,
            };
            let range = read_number(&path.join("max_energy_range_uj"))?;
            zones.push(Zone {
                name,
                energy: path.join("energy_uj"),
                range,
            });
        }
        if zones.is_empty() {
            return Err(NotMeasurable::Absent {
                path: root.join("intel-rapl:0"),
                hint: format!(
                    "no RAPL package zone under {}: a CPU without RAPL, or a kernel without \
                     its powercap driver (intel_rapl_msr)",
                    root.display()
                ),
            });
        }
        let counts = zones
            .iter()
            .map(|z| {
                Ok(Count {
                    last: read_number(&z.energy)?,
                    total: 0,
                })
            })
            .collect::<Result<_, NotMeasurable>>()?;
        Ok(Rapl {
            zones,
            counts: Mutex::new(counts),
        })
    }

    /// The zones it adds: `package-0`, `package-0 dram`, ...
    pub fn zones(&self) -> Vec<String> {
        self.zones.iter().map(|z| z.name.clone()).collect()
    }
}

impl Meter for Rapl {
    fn name(&self) -> String {
        format!("RAPL energy counters ({})", self.zones().join(", "))
    }

    fn resolution(&self) -> Resolution {
        Resolution {
            quantum: 1.0 / 65536.0,
            update: Duration::from_millis(1),
            accuracy: None,
        }
    }

    fn sample(&self) -> Result<Sample, NotMeasurable> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut total = 0;
        for (zone, count) in self.zones.iter().zip(counts.iter_mut()) {
            let now = read_number(&zone.energy)?;
            count.total += advance(count.last, now, zone.range);
            count.last = now;
            total += count.total;
        }
        Ok(Sample::Energy(total as f64 / 1e6))
    }
}

/// What a counter that wraps around to 0 after `range` counted from `last` to `now`.
fn advance(last: u64, now: u64, range: u64) -> u64 {
    if now >= last {
        now - last
    } else {
        range.saturating_sub(last) + now
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The whole number in the file at `path`.
fn read_number(path: &Path) -> Result<u64, NotMeasurable> {
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(path, &e))?;
    text.trim().parse().map_err(|_| NotMeasurable::Failed {
        meter: "RAPL".into(),
        call: path.display().to_string(),
        reason: format!("{:?} is not a whole number", text.trim()),
    })
}

/// Why the file or folder at `path` could not be read.
fn unreadable(path: &Path, e: &io::Error) -> NotMeasurable {
    match e.kind() {
        io::ErrorKind::NotFound => NotMeasurable::Absent {
            path: path.to_owned(),
            hint: "this system shows no powercap zones: not Linux, a kernel without powercap, \
                   or a VM or container that hides them"
                .into(),
        },
        io::ErrorKind::PermissionDenied => NotMeasurable::NoPermission {
            path: path.to_owned(),
            hint: "since Linux 5.10 RAPL's energy_uj is readable by root only (CVE-2020-8694); \
                   run as root, or have an administrator run \
                   `chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj` (until the next boot)"
                .into(),
        },
        _ => NotMeasurable::Failed {
            meter: "RAPL".into(),
            call: path.display().to_string(),
            reason: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_counter_adds_what_it_counted_before_and_after_the_wrap() {
        assert_eq!(advance(100, 250, 1000), 150);
        assert_eq!(advance(900, 50, 1000), 150);
        assert_eq!(advance(7, 7, 1000), 0);
    }

    #[test]
    fn a_denied_read_says_who_may_read_and_a_missing_tree_says_why() {
        let path = Path::new("/sys/class/powercap/intel-rapl:0/energy_uj");
        let denied = unreadable(path, &io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(
            matches!(denied, NotMeasurable::NoPermission { .. }),
            "{denied:?}"
        );
        assert!(
            denied.to_string().starts_with("not measurable here:"),
            "{denied}"
        );
        assert!(denied.to_string().contains("root"), "{denied}");
        let missing = unreadable(path, &io::Error::from(io::ErrorKind::NotFound));
        assert!(
            matches!(missing, NotMeasurable::Absent { .. }),
            "{missing:?}"
        );
    }
}
