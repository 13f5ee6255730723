//! Energy meters: measurements with planted values (the fake meter), the reasons a meter gives
//! where it cannot read, and RAPL's counters read from a powercap tree written by the test.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tunable_runtime::meter::{
    self, Clocks, Energy, Failure, Fake, Meter, NotMeasurable, Rapl, Resolution, Sample, Window,
};

const MS: Duration = Duration::from_millis(1);

/// One run of the work: a short sleep.
fn run() -> Result<(), String> {
    std::thread::sleep(MS);
    Ok(())
}

/// Asserts that `energy` is within its stated uncertainty of a steady `watts`.
fn assert_planted(energy: &Energy, watts: f64) {
    let relative = energy.uncertainty / energy.per_run;
    assert!(
        (energy.power - watts).abs() <= relative * energy.power + 1e-9,
        "power {} W, planted {watts} W, ±{:.3}%: {energy:?}",
        energy.power,
        relative * 100.0
    );
    // The time of a run is whole nanoseconds.
    let expected = watts * energy.time.as_secs_f64();
    assert!(
        (energy.per_run - expected).abs() <= energy.uncertainty + watts * 1e-9 + 1e-9,
        "{} J per run, expected {expected} J: {energy:?}",
        energy.per_run
    );
}

#[test]
fn energy_per_run_is_the_planted_power_times_the_time_of_a_run() {
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(50.0));
    let energy = meter::measure(&meter, 100 * MS, &mut run).unwrap();
    assert!(energy.runs >= 2, "{energy:?}");
    assert!(energy.time >= MS, "{energy:?}");
    assert_planted(&energy, 50.0);
    // The window's energy, shared among the runs.
    let window = energy.power * energy.time.as_secs_f64() * f64::from(energy.runs);
    assert!(
        (energy.per_run * f64::from(energy.runs) - window).abs() <= 1e-6 * window,
        "{energy:?}"
    );
}

#[test]
fn a_coarse_counter_is_measured_between_its_ticks_within_its_uncertainty() {
    let resolution = Resolution {
        quantum: 1e-3,
        update: 20 * MS,
        accuracy: Some(0.05),
    };
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(200.0).with_resolution(resolution));
    let energy = meter::measure(&meter, 200 * MS, &mut run).unwrap();
    assert_planted(&energy, 200.0);
    // The stated accuracy is part of the uncertainty.
    assert!(energy.uncertainty >= 0.05 * energy.per_run, "{energy:?}");
}

#[test]
fn a_power_reading_is_integrated() {
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(80.0).reading_power());
    let energy = meter::measure(&meter, 50 * MS, &mut run).unwrap();
    assert!((energy.power - 80.0).abs() < 1e-6, "{energy:?}");
    assert_planted(&energy, 80.0);
}

#[test]
fn the_clocks_in_force_come_with_the_reading() {
    let clocks = Clocks {
        graphics_mhz: 1755,
        memory_mhz: 2619,
    };
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(10.0).with_clocks(clocks));
    let energy = meter::measure(&meter, 100 * MS, &mut run).unwrap();
    assert_eq!(energy.clocks, Some(clocks));
    let without: Arc<dyn Meter> = Arc::new(Fake::new(10.0));
    assert_eq!(
        meter::measure(&without, 20 * MS, &mut run).unwrap().clocks,
        None
    );
}

#[test]
fn a_window_reads_the_runs_between_start_and_stop() {
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(30.0));
    let window = Window::start(Arc::clone(&meter)).unwrap();
    while !window.ready() || window.elapsed() < 30 * MS {
        run().unwrap();
    }
    let reading = window.stop().unwrap();
    assert!(reading.duration >= 30 * MS);
    let relative = reading.uncertainty / reading.energy;
    assert!(
        (reading.power - 30.0).abs() <= relative * reading.power + 1e-9,
        "{reading:?}"
    );
    assert_eq!(reading.resolution, meter.resolution());
}

#[test]
fn a_window_its_caller_samples_reads_before_its_sampling_thread_has_run() {
    // The thread sleeps a poll period (1 ms here) before its first sample; the caller's two
    // samples, taken at once, are what the window holds.
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(80.0).reading_power());
    let window = Window::start(Arc::clone(&meter)).unwrap();
    window.sample();
    window.sample();
    assert!(window.ready());
    let reading = window.stop().unwrap();
    // A planted power is read exactly, whenever it is sampled.
    assert!((reading.power - 80.0).abs() <= 80.0 * 1e-12, "{reading:?}");
}

#[test]
fn a_meter_that_cannot_read_says_why_and_gives_no_energy() {
    let why = NotMeasurable::Unsupported {
        meter: "NVML of a test GPU".into(),
        what: "reads neither energy nor power".into(),
    };
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(10.0).failing_after(0, why.clone()));
    let mut runs = 0;
    let failed = meter::measure(&meter, 20 * MS, &mut || {
        runs += 1;
        Ok(())
    });
    assert_eq!(failed, Err(Failure::NotMeasurable(why.clone())));
    assert_eq!(runs, 0, "nothing runs when the meter cannot read");
    assert!(
        failed
            .unwrap_err()
            .to_string()
            .starts_with("not measurable here: NVML of a test GPU"),
    );
    // A meter that fails during the runs.
    let later: Arc<dyn Meter> = Arc::new(Fake::new(10.0).failing_after(5, why.clone()));
    assert_eq!(
        meter::measure(&later, 50 * MS, &mut run),
        Err(Failure::NotMeasurable(why))
    );
}

#[test]
fn a_counter_that_never_moves_is_not_measurable_rather_than_zero() {
    let resolution = Resolution {
        quantum: 1e-3,
        update: 5 * MS,
        accuracy: None,
    };
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(10.0).with_resolution(resolution).stalled());
    let stalled = meter::measure(&meter, 20 * MS, &mut run);
    assert!(
        matches!(
            stalled,
            Err(Failure::NotMeasurable(NotMeasurable::Stalled { .. }))
        ),
        "{stalled:?}"
    );
}

#[test]
fn a_failing_run_ends_the_measurement_with_its_message() {
    let meter: Arc<dyn Meter> = Arc::new(Fake::new(10.0));
    let mut runs = 0;
    let failed = meter::measure(&meter, Duration::from_secs(10), &mut || {
        runs += 1;
        if runs == 3 {
            Err("launch failed".into())
        } else {
            Ok(())
        }
    });
    assert_eq!(failed, Err(Failure::Run("launch failed".into())));
}

#[test]
fn the_real_selection_never_returns_the_fake() {
    match meter::for_cpu() {
        Ok(cpu) => assert!(!cpu.name().contains("fake"), "{}", cpu.name()),
        Err(why) => {
            eprintln!("CPU: {why}");
            assert!(why.to_string().starts_with("not measurable here:"), "{why}");
        }
    }
    #[cfg(feature = "cuda")]
    match meter::for_cuda_device(0) {
        Ok(gpu) => assert!(!gpu.name().contains("fake"), "{}", gpu.name()),
        Err(why) => {
            eprintln!("GPU 0: {why}");
            assert!(why.to_string().starts_with("not measurable here:"), "{why}");
        }
    }
}

/// A powercap tree in a folder of the test's own, removed when dropped.
struct Powercap(PathBuf);

impl Powercap {
    fn new(name: &str) -> Powercap {
        let root =
            std::env::temp_dir().join(format!("tunable-meter-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        Powercap(root)
    }

    /// Writes zone `dir` named `name` with counter `energy` wrapping after `range` (µJ).
    fn zone(&self, dir: &str, name: &str, energy: u64, range: u64) -> &Self {
        let zone = self.0.join(dir);
        fs::create_dir_all(&zone).unwrap();
        fs::write(zone.join("name"), format!("{name}\n")).unwrap();
        fs::write(zone.join("max_energy_range_uj"), format!("{range}\n")).unwrap();
        self.set(dir, energy)
    }

    fn set(&self, dir: &str, energy: u64) -> &Self {
        fs::write(self.0.join(dir).join("energy_uj"), format!("{energy}\n")).unwrap();
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Powercap {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const RANGE: u64 = 262_143_328_850;

#[test]
fn rapl_adds_the_packages_and_their_dram_and_nothing_they_contain() {
    let tree = Powercap::new("zones");
    tree.zone("intel-rapl:0", "package-0", 1_000, RANGE)
        .zone("intel-rapl:0:0", "core", 5_000, RANGE)
        .zone("intel-rapl:0:1", "dram", 500, RANGE)
        .zone("intel-rapl:1", "package-1", 7_000, RANGE)
        .zone("intel-rapl:2", "psys", 9_000, RANGE)
        .zone("intel-rapl-mmio:0", "package-0", 1_000, RANGE);
    let rapl = Rapl::at(tree.path()).unwrap();
    assert_eq!(rapl.zones(), ["package-0", "package-0 dram", "package-1"]);
    assert_eq!(rapl.sample().unwrap(), Sample::Energy(0.0));
    tree.set("intel-rapl:0", 3_000)
        .set("intel-rapl:0:0", 9_000)
        .set("intel-rapl:0:1", 700)
        .set("intel-rapl:1", 8_000)
        .set("intel-rapl:2", 90_000);
    // 2000 + 200 + 1000 µJ.
    assert_eq!(rapl.sample().unwrap(), Sample::Energy(3_200e-6));
}

#[test]
fn rapl_adds_back_a_counter_that_wrapped_around() {
    let tree = Powercap::new("wrap");
    tree.zone("intel-rapl:0", "package-0", RANGE - 1_000, RANGE);
    let rapl = Rapl::at(tree.path()).unwrap();
    tree.set("intel-rapl:0", 500);
    assert_eq!(rapl.sample().unwrap(), Sample::Energy(1_500e-6));
    tree.set("intel-rapl:0", 2_500);
    assert_eq!(rapl.sample().unwrap(), Sample::Energy(3_500e-6));
}

#[test]
fn rapl_without_zones_says_what_is_missing() {
    let tree = Powercap::new("empty");
    let none = Rapl::at(tree.path()).unwrap_err();
    assert!(matches!(none, NotMeasurable::Absent { .. }), "{none:?}");
    let missing = Rapl::at(&tree.path().join("not-there")).unwrap_err();
    assert!(
        matches!(missing, NotMeasurable::Absent { .. }),
        "{missing:?}"
    );
    assert!(
        missing.to_string().starts_with("not measurable here:"),
        "{missing}"
    );
}

#[test]
fn rapl_counters_that_do_not_move_give_no_reading() {
    let tree = Powercap::new("frozen");
    tree.zone("intel-rapl:0", "package-0", 1_000, RANGE);
    let rapl: Arc<dyn Meter> = Arc::new(Rapl::at(tree.path()).unwrap());
    let frozen = meter::measure(&rapl, 10 * MS, &mut run);
    assert!(
        matches!(
            frozen,
            Err(Failure::NotMeasurable(NotMeasurable::Stalled { .. }))
        ),
        "{frozen:?}"
    );
}
