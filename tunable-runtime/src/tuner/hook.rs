//! # The first-run hook
//!
//! What a call of a `#[tunable]` kernel does in a build with the `autotune` feature:
//! [`autotune`] looks the call's slot up ([`Lookup`]), and on a miss tunes the kernel on the
//! call's own arguments, stores the winner in the tuned file (a later plain build bakes it) and
//! prints a [`Summary`].
//!
//! Settings from the environment ([`crate::settings`]): `TUNABLE_MODE`, `TUNABLE_BUDGET`,
//! `TUNABLE_STRATEGY`, `TUNABLE_SEED`, `TUNABLE_BATCH`, `TUNABLE_LOG`, `TUNABLE_DIR`; and those of a tuning
//! session ([`super::session`]): `TUNABLE_KERNELS`, `TUNABLE_TIME`, `TUNABLE_REPORT`. With
//! `TUNABLE_EVALUATE` set (a distributed worker's evaluation, see [`evaluate`]) nothing tunes:
//! the requested call measures the requested configuration and the process ends.

use super::{
    Bar, Call, Evaluation, Journaled, Log, Lookup, Observer, Origin, Point, Run, Summary,
    TimeSplit, TuneOptions, Variants, Verify, capture, clocking, confirm, describe, evaluate,
    lookup::Baked,
    metering,
    session::{self, Record},
    tune,
    warm::plan,
};
use crate::RuntimeError;
use crate::backend::definitions;
use crate::backend::record::{Recorded, record};
use crate::evaluation::{self, EvalContext};
use crate::journal::{Journal, Quantities};
use crate::params::Params;
use crate::settings::{self, Mode};
use crate::store::{Ranked, TunedEntry, read, store_with_artifacts, tuned_dir, tuned_file};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tunable_search::Space;
use tunable_search::format::artifact::Recipe;
use tunable_search::format::tuned::{Front, FrontPoint};
use tunable_search::objective::{Goal, Objective};

pub use super::spec::KernelSpec;

/// The configuration to run for `key` on `device` with the `autotune` feature: tuned this
/// process, baked, or stored by an earlier run; otherwise tunes now with `run` (which runs one
/// variant on the call's own arguments, see [`super::Call`]) and stores the winner.
/// `table` is the kernel's baked table, `default` its default configuration.
///
/// # Panics
/// If `TUNABLE_MODE` holds an unknown value (the message names the valid ones), or
/// `TUNABLE_BUDGET`, `TUNABLE_SEED` or `TUNABLE_BATCH` is not a whole number when the call tunes (the message
/// names it). Nothing else panics: a variant's failure is data, and an I/O problem is reported
/// on stderr while the default configuration runs.
pub fn autotune<P: Params>(
    kernel: &KernelSpec,
    space: &Arc<Space>,
    device: &str,
    key: u64,
    table: &'static [Baked<P>],
    default: P,
    run: &mut Run<'_, P>,
) -> P {
    // A worker's evaluation of one configuration: answer the requested call, run the others.
    if let Some(request) = evaluate::request() {
        if evaluate::asks(request, kernel.name, key) {
            let reply = evaluate::outcome(request, kernel, space, device, default, run);
            evaluate::reply_and_exit(&reply);
        }
        return default;
    }
    let mode = settings::mode().unwrap_or_else(|e| panic!("tunable: {e}"));
    // A session tuning other kernels (`TUNABLE_KERNELS`): this one only runs.
    let mode = if session::selected(kernel.name) {
        mode
    } else {
        Mode::Off
    };
    match Lookup::find(kernel, space, device, key, table, default, mode) {
        Lookup::Hit(p, _) | Lookup::Pending(p) => p,
        Lookup::Miss(claim) => {
            // Read only when tuning: a call answered from the slot costs no more lookups.
            let opts = kernel
                .options(space)
                .unwrap_or_else(|e| panic!("tunable: {e}"));
            let (p, origin) = claim
                .exclusively(|| tune_call(kernel, space, device, key, default, (mode, opts), run));
            claim.settle(&p, origin);
            p
        }
    }
}

/// How many of the fastest configurations are re-timed to confirm the winner.
const CONFIRM: usize = 3;

/// Tunes the kernel on this call: reference output, journal, default first, the strategy, the
/// best few re-timed interleaved ([`confirm`]), the winner stored; ends with the summary line.
/// `opts` are the kernel's options (checked before anything runs); under [`Mode::Retune`] the
/// journal starts empty, so that the whole budget is measured again.
fn tune_call<P: Params>(
    kernel: &KernelSpec,
    space: &Arc<Space>,
    device: &str,
    key: u64,
    default: P,
    options: (Mode, TuneOptions),
    run: &mut Run<'_, P>,
) -> (P, Origin) {
    // The call's evaluation context: the reference run, the tuning and the confirmation report
    // their time split to it (see `crate::evaluation`).
    let call = || tune_in_context(kernel, space, device, key, default, options, run);
    evaluation::scope(EvalContext::default(), call).0
}

/// [`tune_call`] inside its evaluation context.
fn tune_in_context<P: Params>(
    kernel: &KernelSpec,
    space: &Arc<Space>,
    device: &str,
    key: u64,
    default: P,
    (mode, opts): (Mode, TuneOptions),
    run: &mut Run<'_, P>,
) -> (P, Origin) {
    let start = Instant::now();
    let (expected, built) = record(|| kernel.verify.expected(default, run));
    let expected = match expected {
        Ok(e) => e,
        Err(reason) => {
            eprintln!(
                "tunable: cannot verify {}: the reference failed ({reason}); not tuning, using the default configuration",
                kernel.name
            );
            let why = format!("the reference failed ({reason})");
            session::record(&Record::failure(kernel.name, key, device, why));
            return (default, Origin::Default);
        }
    };
    let build = build_fingerprint(kernel, built.programs(), || {
        record(|| capture(|| run(Call::Run(&default)))).1.programs()
    });
    let reference = TimeSplit::since(start);
    // An objective that needs energy takes its meter now, before any evaluation: the CUDA
    // device the reference or probe run asked for a kernel, else the CPU's for a CPU kernel.
    let cuda = evaluation::with(|c| c.cuda).flatten();
    let metering = settings::energy_seconds()
        .and_then(|min| metering::select(&opts.goal, kernel.device_given, cuda, min));
    let metering = match metering {
        Ok(m) => m,
        Err(e) => return tuning_failed(kernel, key, device, &e, default),
    };
    // Clock parameters take the hold on the same device's settings now, before the journal
    // opens and before any evaluation: the settings in force are read and the rights checked.
    // They are put back when `opts`, which holds it, is dropped at the end of this call.
    let clocks = match clocking::select(space, cuda) {
        Ok(c) => c,
        Err(e) => return tuning_failed(kernel, key, device, &e, default),
    };
    let dir = tuned_dir(kernel.manifest_dir);
    // A tuning for anything but time has a journal of its own (the goal is part of its name);
    // one with a meter reads back the energy measured with each time, so that an interrupted
    // tuning resumes without measuring again (see `crate::journal`).
    let quantities = metering
        .as_ref()
        .map_or_else(Quantities::default, super::journal_layer::quantities);
    let open = |path: &std::path::Path, space, name: &str, device: &str| match mode {
        Mode::Retune => Journal::restart(path, space, name, device),
        _ => Journal::open_measuring(path, space, name, device, &quantities),
    };
    let build = match opts.goal.single() {
        Some(Objective::Time) => build,
        _ => {
            let goal = opts.goal.to_string();
            tunable_search::fingerprint::fnv1a(&[&build.to_le_bytes(), goal.as_bytes()])
        }
    };
    let journal = Journal::path_for_run(&dir, kernel.name, key, space, build, device)
        .map_err(RuntimeError::from)
        .and_then(|path| open(&path, Arc::clone(space), kernel.name, device))
        .inspect_err(|e| eprintln!("tunable: {e}; tuning without a journal"))
        .ok();
    let measurement = kernel.measurement(expected.is_some());
    let mut evaluator = Journaled::new(journal, Variants::new(space, run, expected, measurement));
    // The default first: the summary's baseline, and the first incumbent of the early stop.
    let default_at = space.position_of_values(&default.to_values());
    let (first, warm) = first_positions(kernel, space, device, key, default_at);
    let opts = TuneOptions {
        first,
        key,
        meter: metering,
        clocks,
        ..opts
    };
    let label = format!("{} (key {key})", kernel.name);
    let bar = Bar::new(&label, opts.budget.min(space.len()));
    let mut log = Log::new(space, &label, Log::every_from_env(), Some(bar.clone()));
    let mut progress = bar;
    let observers: &mut [&mut dyn Observer<Evaluation>] = &mut [&mut progress, &mut log];
    // The programs GPU backends build meanwhile are recorded: the winner's binaries are stored
    // with it (see `crate::backend::record`).
    let (report, recorded) = record(|| tune(space, &opts, &mut evaluator, observers));
    let report = match report {
        Ok(r) => r,
        Err(e) => return tuning_failed(kernel, key, device, &e, default),
    };
    let default_result = match default_at.and_then(|p| evaluator.result(p)) {
        Some(Ok(t)) => Ok(*t),
        Some(Err(why)) => Err(format!("failed ({why})")),
        None => Err("not measured (not in the space)".to_owned()),
    };
    // The best few, re-timed interleaved: the confirmation can change the winner. A tuning
    // answered wholly by the journal measures nothing, this included.
    let confirming = Instant::now();
    // Re-timing ranks by time: a tuning for anything else keeps the winner its goal chose. With
    // clock parameters, the clocks are back to those in force before the tuning by now, so
    // re-timing would not time the configurations as they were measured.
    let confirmed = if report.measured == 0
        || opts.goal.single() != Some(Objective::Time)
        || opts.clocks.is_some()
    {
        0
    } else {
        CONFIRM
    };
    let contenders = &report.contenders[..report.contenders.len().min(confirmed)];
    let (best, confirmed_recorded) =
        record(|| confirm(&mut evaluator, contenders, kernel.repeats.max(3)).or(report.best));
    let confirmation = TimeSplit::since(confirming);
    drop(evaluator);
    let seconds = start.elapsed().as_secs_f64();
    let summary = Summary {
        kernel: kernel.name,
        key,
        device,
        default: default_result,
        tuned: best.map(|(p, t)| (describe(space, p), t)),
        evaluations: report.evaluations,
        measured: report.measured,
        failures: report.failures.len(),
        early: report.early,
        seconds,
        spent: TimeSplit {
            other: 0.0,
            ..reference.plus(report.spent).plus(confirmation)
        }
        .with_wall(seconds),
        confirmed: contenders.len(),
        changed: best.map(|b| b.0) != report.best.map(|b| b.0),
        warm,
    };
    eprintln!("{summary}");
    session::record(&Record::of(&summary));
    let Some(best) = best else {
        return (default, Origin::Default);
    };
    let values = space.values(best.0);
    let tuned = P::from_values(&values);
    let recorded = [recorded, confirmed_recorded];
    let binaries = tuned.map_or_else(Vec::new, |p| {
        winner_binaries(kernel.name, &recorded, p, report.measured == 0, run)
    });
    let winner = Winner {
        top: confirmed_top(best, &report.top),
        evaluations: report.evaluations,
        strategy: &opts.strategy,
        binaries,
        front: stored_front(&opts.goal, space, &report.front),
    };
    if let Err(e) = winner.store(kernel, space, device, key) {
        eprintln!(
            "tunable: cannot store the tuned configuration of {}: {e}",
            kernel.name
        );
    }
    match tuned {
        Some(p) => (p, Origin::Tuned),
        None => (default, Origin::Default),
    }
}

/// A tuning that failed with the tuner's own error `e` (a bad strategy, no meter for the
/// objective): said on stderr and recorded for the session; the call runs `default`.
fn tuning_failed<P>(
    kernel: &KernelSpec,
    key: u64,
    device: &str,
    e: &RuntimeError,
    default: P,
) -> (P, Origin) {
    eprintln!(
        "tunable: tuning {} failed: {e}; using the default configuration",
        kernel.name
    );
    session::record(&Record::failure(kernel.name, key, device, e.to_string()));
    (default, Origin::Default)
}

/// What the journal of a tuning is kept for besides the space and device: the kernel's body
/// and, for a GPU kernel, the programs the default configuration builds, by content (source
/// text, entry point, options, target; [`Recorded::programs`]). A tuning of an edited kernel
/// source therefore starts a journal of its own, as one of an edited body does, even though the
/// body only names the source (`include_str!`).
///
/// `built` are the programs the reference run asked for. Without a reference run (no `verify`,
/// or an `answer`), `probe` runs the default configuration once, untimed, to see them, if the
/// kernel names a `device`, as GPU kernels do (a CPU kernel that names one is run once more too,
/// and asks for none). Programs are noted when asked for, before they are built, so a default
/// that fails to compile still shows its source; a run that fails before asking for any (a
/// panic first thing) leaves them unknown, and the body alone keys the journal, as it does for
/// a CPU kernel.
fn build_fingerprint(
    kernel: &KernelSpec,
    built: Option<u64>,
    probe: impl FnOnce() -> Option<u64>,
) -> u64 {
    let programs = match kernel.verify {
        Verify::Reference { .. } => built,
        _ if kernel.device_given => probe(),
        _ => None,
    };
    programs.map_or(kernel.body, |p| {
        tunable_search::fingerprint::fnv1a(&[&kernel.body.to_le_bytes(), &p.to_le_bytes()])
    })
}

/// The device binaries GPU backends built for the winner while tuning (none for a CPU
/// kernel). A winner the tuning did not run itself (`journaled`: the journal answered it) is run
/// once more, recorded, when nothing was built for it. A binary that cannot be produced is said
/// on stderr; the winner is then stored without binaries.
fn winner_binaries<P: Params>(
    name: &str,
    recorded: &[Recorded],
    winner: P,
    journaled: bool,
    run: &mut Run<'_, P>,
) -> Vec<(Recipe, Vec<u8>)> {
    // A configuration without definitions cannot have been compiled by a GPU backend.
    let Ok(defs) = definitions(&winner) else {
        return Vec::new();
    };
    let of = |recorded: &[Recorded]| -> Result<Vec<_>, String> {
        let mut out = Vec::new();
        for r in recorded {
            out.extend(r.binaries(&defs)?);
        }
        Ok(out)
    };
    let mut binaries = of(recorded);
    let built_any = recorded.iter().any(|r| !r.is_empty());
    if matches!(&binaries, Ok(b) if b.is_empty()) && (journaled || built_any) {
        let (ran, again) = record(|| capture(|| run(Call::Run(&winner))));
        binaries = match ran.and_then(|r| r) {
            Ok(_) => of(&[again]),
            Err(why) => Err(format!("running it to build its binary failed ({why})")),
        };
    }
    binaries.unwrap_or_else(|e| {
        eprintln!("tunable: cannot store the device binary of {name}: {e}");
        Vec::new()
    })
}

/// What the tuning evaluates first: the default configuration (the summary's baseline), then
/// the [warm start](super::warm) from the tuned file's entries for other devices and for this
/// device's other keys, said on stderr; with the warm start's size and source for the summary.
fn first_positions(
    kernel: &KernelSpec,
    space: &Space,
    device: &str,
    key: u64,
    default_at: Option<usize>,
) -> (Vec<usize>, Option<(usize, String)>) {
    let entries = tuned_file(&tuned_dir(kernel.manifest_dir), kernel.name)
        .map_or_else(|_| Vec::new(), |path| read(&path).unwrap_or_default());
    let warm = plan(&entries, kernel.name, space, device, key);
    let source = warm.describe();
    if let Some(from) = &source {
        eprintln!(
            "tunable: {} (key {key}): warm start from {from}: {} configuration(s) first",
            kernel.name,
            warm.positions.len()
        );
    }
    let n = warm.positions.len();
    let mut first: Vec<usize> = default_at.into_iter().collect();
    first.extend(
        warm.positions
            .into_iter()
            .filter(|p| Some(*p) != default_at),
    );
    (first, source.map(|s| (n, s)))
}

/// What the tuned file keeps about a winner.
struct Winner<'a> {
    /// The fastest configurations evaluated (positions, times), the confirmed winner first at
    /// its confirmed time ([`confirmed_top`]).
    top: Vec<(usize, f64)>,
    evaluations: usize,
    strategy: &'a str,
    /// The device binaries built for the winner, stored beside the tuned file.
    binaries: Vec<(Recipe, Vec<u8>)>,
    /// The front of a tuning for other objectives than time alone.
    front: Option<Front>,
}

/// The front a tuning for `goal` stores ([`TunedEntry::front`]): none for time alone.
fn stored_front(goal: &Goal, space: &Space, front: &[Point]) -> Option<Front> {
    if goal.single() == Some(Objective::Time) {
        return None;
    }
    Some(Front {
        objectives: goal.aims().iter().map(ToString::to_string).collect(),
        prefer: goal.prefer().to_string(),
        points: front
            .iter()
            .map(|p| FrontPoint {
                values: Ranked::at(space, p.position, p.ms).values,
                time_ms: p.ms,
                objectives: p.values.clone(),
            })
            .collect(),
    })
}

/// The kept list: the confirmed winner `best` first, at its confirmed time, then the tuning's
/// fastest others, [`KEPT`](tunable_search::portable::KEPT) at most. The confirmation can pick a
/// configuration the tuning ranked second, so the list is not `top` as measured.
fn confirmed_top(best: (usize, f64), top: &[(usize, f64)]) -> Vec<(usize, f64)> {
    std::iter::once(best)
        .chain(top.iter().copied().filter(|&(p, _)| p != best.0))
        .take(tunable_search::portable::KEPT)
        .collect()
}

impl Winner<'_> {
    /// Stores the winner (the first of `top`) for the slot into the kernel's tuned file, with
    /// its device binaries.
    fn store(
        self,
        kernel: &KernelSpec,
        space: &Space,
        device: &str,
        key: u64,
    ) -> Result<(), RuntimeError> {
        let (position, time_ms) = self.top[0];
        let entry = TunedEntry {
            kernel: kernel.name.to_owned(),
            device: device.to_owned(),
            key,
            space_hash: space.fingerprint(),
            params: TunedEntry::named(space, &space.values(position)),
            time_ms,
            evaluations: self.evaluations as u32,
            strategy: self.strategy.to_owned(),
            timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            top: self
                .top
                .iter()
                .map(|&(p, t)| Ranked::at(space, p, t))
                .collect(),
            sources: kernel.sources.to_vec(),
            // Filled by the store with the files it writes for the winner.
            binaries: Vec::new(),
            front: self.front,
        };
        store_with_artifacts(
            &tuned_file(&tuned_dir(kernel.manifest_dir), kernel.name)?,
            entry,
            self.binaries,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuner::testing::{Tile, fake_kernel};
    use crate::tuner::{Call, panic};
    use tunable_search::Value;

    #[test]
    fn the_journal_is_kept_per_program_source_where_the_programs_can_be_seen() {
        let kernel = |verify, device_given| KernelSpec {
            verify,
            device_given,
            body: 11,
            ..fake_kernel("hook_build", 1).0
        };
        let reference = Verify::Reference { tolerance: 0.0 };
        let never = || -> Option<u64> { panic!("no probe when the reference ran") };
        let with_programs = build_fingerprint(&kernel(reference, true), Some(5), never);
        assert_ne!(with_programs, 11);
        // The reference run shows the programs; a CPU kernel asks for none: the body alone.
        assert_eq!(
            build_fingerprint(&kernel(reference, false), None, never),
            11
        );
        assert_ne!(
            build_fingerprint(&kernel(reference, true), Some(6), never),
            with_programs
        );
        // Without a reference run, a kernel naming a device is probed, to the same fingerprint;
        // one that names none is not run.
        for verify in [Verify::Off, Verify::Answer { tolerance: 0.0 }] {
            assert_eq!(
                build_fingerprint(&kernel(verify, true), None, || Some(5)),
                with_programs
            );
            let not_run = || -> Option<u64> { panic!("a kernel naming no device is not probed") };
            assert_eq!(build_fingerprint(&kernel(verify, false), None, not_run), 11);
        }
    }

    /// A fake kernel with planted faults, CubeCL-style: tile 6 panics, tile 5 fails to launch,
    /// tile 4 is the fastest and wrong, tile 3 the fastest correct one.
    #[test]
    fn tunes_a_fake_kernel_stores_the_winner_and_answers_later_calls() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (kernel, space, dir) = fake_kernel("hook_fake", 2);
        let manifest = kernel.manifest_dir;
        let (mut out, runs) = (vec![0.0; 4], std::cell::Cell::new(0));
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(6)) => panic!("boom"),
            Call::Run(&Tile(5)) => Err("launch failed".to_owned()),
            Call::Run(&Tile(t)) => {
                runs.set(runs.get() + 1);
                // 1 ms for the best, 30 ms more per step away, as device time (the injected
                // clock).
                let us = if t == 4 {
                    100
                } else {
                    1000 + 30_000 * t.abs_diff(3)
                };
                crate::measure::report_device_time(us as f64 / 1e3);
                out.fill(if t == 4 { 1.0 } else { 0.0 });
                Ok(None)
            }
            Call::Output => Ok(Some(out.clone())),
            Call::Answer => Ok(None),
        };
        let p = autotune(&kernel, &space, "dev", 1, &[], Tile(1), &mut run);
        assert_eq!(p, Tile(3));
        let stored = read(&tuned_file(&tuned_dir(manifest), "hook_fake").unwrap()).unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].values(), [Value::Int(3)]);
        // The correct configurations measured, fastest first: 3, then 2 and 1 (4, 5, 6 failed).
        let ranked: Vec<Vec<Value>> = stored[0].ranked().into_iter().map(|(v, _)| v).collect();
        assert_eq!(ranked, [[Value::Int(3)], [Value::Int(2)], [Value::Int(1)]]);
        let journal = Journal::open(
            &Journal::path_for_run(&tuned_dir(manifest), "hook_fake", 1, &space, 0, "dev").unwrap(),
            Arc::clone(&space),
            "hook_fake",
            "dev",
        )
        .unwrap();
        assert_eq!(journal.len(), 6);
        assert_eq!(journal.lookup(5), Some(&Err("panicked: boom".to_owned())));
        assert_eq!(journal.lookup(4), Some(&Err("launch failed".to_owned())));
        let wrong = journal.lookup(3).unwrap().clone().unwrap_err();
        assert!(
            wrong.starts_with("wrong output: 4 of 4 elements differ"),
            "{wrong}"
        );
        // Tuned in this process: the next call runs nothing more to decide.
        let before = runs.get();
        let p = autotune(&kernel, &space, "dev", 1, &[], Tile(1), &mut run);
        assert_eq!((p, runs.get()), (Tile(3), before));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Every file under `dir` whose text holds `needle`.
    fn files_holding(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(files_holding(&path, needle));
            } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
                found.push(path);
            }
        }
        found
    }

    /// What `tune` gives with a planted meter, handed a kernel that runs in the planted time
    /// and draws the planted power of each tile ([`crate::tuner::energy_tests::planted`]),
    /// which the fake reads whenever it is sampled; and the runs of each tile.
    fn metered<T>(
        tune: impl FnOnce(&mut Run<'_, Tile>) -> T,
    ) -> (T, std::collections::BTreeMap<i64, usize>) {
        use crate::meter::{Fake, Meter};
        let fake = Arc::new(Fake::new(0.0).reading_power());
        let _planted = metering::plant(Arc::clone(&fake) as Arc<dyn Meter>);
        let mut runs = std::collections::BTreeMap::new();
        let mut run = |call: Call<'_, Tile>| {
            if let Call::Run(&Tile(t)) = call {
                let (ms, watts) = crate::tuner::energy_tests::planted(t);
                fake.set_watts(watts);
                crate::measure::report_device_time(ms);
                *runs.entry(t).or_default() += 1;
            }
            Ok(None)
        };
        let out = tune(&mut run);
        (out, runs)
    }

    /// `kernel` tuned through the first-run hook on a planted meter ([`metered`]): the
    /// configuration the call runs.
    fn metered_tuning(kernel: &KernelSpec, space: &Arc<Space>) -> Tile {
        metered(|run| autotune(kernel, space, "dev", 1, &[], Tile(1), run)).0
    }

    /// A whole tuning for energy through the first-run hook, on a planted meter whose power the
    /// kernel sets: the least energy wins, not the fastest, and the journal records the energy.
    #[test]
    fn a_tuning_for_energy_stores_the_least_energy_and_journals_it() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (kernel, space, dir) = fake_kernel("hook_energy", 2);
        let kernel = KernelSpec {
            objectives: &["energy"],
            verify: Verify::Off,
            ..kernel
        };
        // The fastest is tile 1; the least energy (power times time) is tile 4.
        assert_eq!(metered_tuning(&kernel, &space), Tile(4));
        let stored = read(&tuned_file(&tuned_dir(kernel.manifest_dir), "hook_energy").unwrap());
        assert_eq!(stored.unwrap()[0].values(), [Value::Int(4)]);
        let journals = files_holding(&dir, "\"fake_energy\"");
        assert_eq!(journals.len(), 1, "{journals:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// An interrupted tuning for energy resumes from its journal: the configurations it
    /// journaled are not run again and come back with the energy measured before, so the
    /// winner and the stored ranking are those of a tuning that was never interrupted.
    #[test]
    fn an_interrupted_tuning_for_energy_resumes_with_the_journaled_energy() {
        use crate::meter::Fake;
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let energy = |name| {
            let (kernel, space, dir) = fake_kernel(name, 2);
            let kernel = KernelSpec {
                objectives: &["energy"],
                verify: Verify::Off,
                ..kernel
            };
            (kernel, space, dir)
        };
        let (whole, space, whole_dir) = energy("hook_energy_whole");
        assert_eq!(metered_tuning(&whole, &space), Tile(4));
        // A tuning of the same kernel stopped after four evaluations, as a kill leaves its
        // journal, then the same call again with the whole budget; the runs of each tile.
        let (kernel, _, dir) = energy("hook_energy_resumed");
        let tuned = |budget: usize| {
            let kernel = KernelSpec { budget, ..kernel };
            let options = (Mode::Tune, kernel.options(&space).unwrap());
            metered(|run| tune_call(&kernel, &space, "dev", 1, Tile(1), options, run).0)
        };
        let (_, before) = tuned(4);
        let journal = || {
            let path = files_holding(&dir, "\"fake_energy\"");
            assert_eq!(path.len(), 1, "{path:?}");
            let metered = metering::Metering {
                meter: Arc::new(Fake::new(0.0)),
                min: std::time::Duration::ZERO,
                prefix: "fake",
            };
            let quantities = super::super::journal_layer::quantities(&metered);
            Journal::open_measuring(&path[0], Arc::clone(&space), "k", "dev", &quantities).unwrap()
        };
        let interrupted = journal();
        assert_eq!(interrupted.len(), 4);
        let journaled: Vec<usize> = (0..6)
            .filter(|&p| interrupted.lookup(p).is_some())
            .collect();
        let fields: Vec<Vec<(String, f64)>> = journaled
            .iter()
            .map(|&p| interrupted.fields(p).to_vec())
            .collect();
        drop(interrupted);
        let (winner, after) = tuned(6);
        assert_eq!(winner, Tile(4));
        // Only the configurations the journal lacked ran.
        let tiles = |p: &[usize]| p.iter().map(|&p| p as i64 + 1).collect::<Vec<_>>();
        assert_eq!(
            before.keys().copied().collect::<Vec<_>>(),
            tiles(&journaled)
        );
        let rest: Vec<usize> = (0..6).filter(|p| !journaled.contains(p)).collect();
        assert_eq!(after.keys().copied().collect::<Vec<_>>(), tiles(&rest));
        // The journal holds all six, the first four with the energy measured before.
        let resumed = journal();
        assert_eq!(resumed.len(), 6);
        for (&p, f) in journaled.iter().zip(&fields) {
            assert_eq!(resumed.fields(p), f.as_slice());
        }
        drop(resumed);
        // The same winner and ranking as the tuning never interrupted.
        let stored = |dir: &std::path::Path, name| {
            read(&tuned_file(&tuned_dir(&dir.to_string_lossy()), name).unwrap()).unwrap()
        };
        let (whole, resumed) = (
            stored(&whole_dir, "hook_energy_whole"),
            stored(&dir, "hook_energy_resumed"),
        );
        assert_eq!(whole[0].values(), resumed[0].values());
        assert_eq!(whole[0].ranked(), resumed[0].ranked());
        std::fs::remove_dir_all(&whole_dir).ok();
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A tuning with clock parameters through the first-run hook: each configuration measured
    /// at its clock (tile 2 at 900 MHz is the fastest), the winner stored with its clock, the
    /// clock in force before back at the end. Without the rights, the tuning evaluates nothing
    /// and the call runs the default.
    #[test]
    fn a_tuning_with_clock_parameters_sets_them_and_puts_them_back() {
        use crate::clock::{ClockControl, Fake};
        use crate::tuner::testing::{Clocked, clocked_space};
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let space = clocked_space();
        for (denied, name) in [(false, "hook_clocks"), (true, "hook_clocks_denied")] {
            let (kernel, _, dir) = fake_kernel(name, 2);
            let kernel = KernelSpec {
                verify: Verify::Off,
                ..kernel
            };
            let fake = Arc::new(if denied {
                Fake::new().denied()
            } else {
                Fake::new()
            });
            let _planted = clocking::plant(Arc::clone(&fake) as Arc<dyn ClockControl>);
            let runs = std::cell::RefCell::new(Vec::new());
            let mut run = |call: Call<'_, Clocked>| match call {
                Call::Run(&p) => {
                    runs.borrow_mut().push((p, fake.graphics_mhz()));
                    let ms = if p == Clocked(2, 900) { 1.0 } else { 5.0 };
                    crate::measure::report_device_time(ms);
                    Ok(None)
                }
                Call::Output | Call::Answer => Ok(None),
            };
            let p = autotune(&kernel, &space, "dev", 1, &[], Clocked(1, 1400), &mut run);
            let runs = runs.into_inner();
            assert_eq!(fake.graphics_mhz(), Fake::GRAPHICS_MHZ);
            if denied {
                assert_eq!((p, runs.len()), (Clocked(1, 1400), 0));
                assert!(
                    files_holding(&dir, "tile").is_empty(),
                    "journaled or stored"
                );
                std::fs::remove_dir_all(&dir).ok();
                continue;
            }
            assert_eq!(p, Clocked(2, 900));
            assert!(
                runs.iter().all(|(p, mhz)| i64::from(*mhz) == p.1),
                "{runs:?}"
            );
            let stored = read(&tuned_file(&tuned_dir(kernel.manifest_dir), "hook_clocks").unwrap());
            assert_eq!(
                stored.unwrap()[0].values(),
                [Value::Int(2), Value::Int(900)]
            );
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A whole tuning for two objectives through the first-run hook, on a planted meter: the
    /// tuned file holds the front of what was measured, and the entry (what a build bakes) is
    /// the point the rule chose.
    #[test]
    fn a_tuning_for_two_objectives_stores_its_front_and_the_chosen_point() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (kernel, space, dir) = fake_kernel("hook_front", 2);
        let kernel = KernelSpec {
            objectives: &["time", "energy"],
            prefer: Some("least_energy within 2.5 of fastest"),
            strategy: "random",
            verify: Verify::Off,
            ..kernel
        };
        // The front is tiles 1, 2 and 4; within 2.5 times the fastest's time, tile 2 uses the
        // least energy.
        assert_eq!(metered_tuning(&kernel, &space), Tile(2));
        let stored = read(&tuned_file(&tuned_dir(kernel.manifest_dir), "hook_front").unwrap());
        let entry = stored.unwrap().remove(0);
        assert_eq!(entry.values(), [Value::Int(2)]);
        let front = entry.front.expect("a front is stored");
        assert_eq!(front.objectives, ["time", "energy"]);
        assert_eq!(front.prefer, "least_energy within 2.5 of fastest");
        let tiles: Vec<_> = front.points.iter().map(|p| p.values.clone()).collect();
        let tile = |t| vec![tunable_search::format::tuned::StoredValue::Int(t)];
        assert_eq!(tiles, [tile(1), tile(2), tile(4)]);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A tuning for energy where no meter can read fails before any evaluation: only the
    /// default runs, and nothing is journaled or stored. Real: the CPU's meter, where this
    /// process may not read RAPL (on a machine where it may, there is nothing to test here).
    #[test]
    fn a_tuning_for_energy_without_a_meter_evaluates_nothing() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let Err(why) = crate::meter::for_cpu() else {
            return;
        };
        let (kernel, space, dir) = fake_kernel("hook_unmetered", 2);
        let kernel = KernelSpec {
            objectives: &["edp"],
            verify: Verify::Off,
            ..kernel
        };
        let runs = std::cell::Cell::new(0);
        let mut run = |call: Call<'_, Tile>| {
            if let Call::Run(_) = call {
                runs.set(runs.get() + 1);
            }
            Ok(None)
        };
        let p = autotune(&kernel, &space, "dev", 1, &[], Tile(2), &mut run);
        assert_eq!((p, runs.get()), (Tile(2), 0));
        assert!(why.to_string().starts_with("not measurable here"), "{why}");
        assert!(
            files_holding(&dir, "tile").is_empty(),
            "journaled or stored"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Warm start needs no option: once a key is tuned on this device, tuning another key
    /// evaluates its winner right after the default, and the summary names the source.
    #[test]
    fn another_key_of_this_device_is_warm_started_from_the_tuned_one() {
        let _serial = panic::HOOK_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let (kernel, space, dir) = fake_kernel("hook_warm", 1);
        let mut out = vec![0.0; 4];
        let mut run = |call: Call<'_, Tile>| match call {
            Call::Run(&Tile(t)) => {
                let us = if t == 5 { 500 } else { 20_000 };
                crate::measure::report_device_time(us as f64 / 1e3);
                out.fill(0.0);
                Ok(None)
            }
            Call::Output => Ok(Some(out.clone())),
            Call::Answer => Ok(None),
        };
        assert_eq!(
            autotune(&kernel, &space, "dev", 64, &[], Tile(1), &mut run),
            Tile(5)
        );
        let at = |t: i64| space.position_of_values(&[Value::Int(t)]).unwrap();
        let (first, warm) = first_positions(&kernel, &space, "dev", 128, Some(at(1)));
        assert_eq!(
            first[..2],
            [at(1), at(5)],
            "the default, then key 64's winner"
        );
        let (n, from) = warm.expect("warm-started");
        assert_eq!((n, from.as_str()), (3, "this device's key 64"));
        // The key already tuned is not seeded from itself; another device is seeded from it.
        assert_eq!(
            first_positions(&kernel, &space, "dev", 64, Some(at(1))),
            (vec![at(1)], None)
        );
        let (first, warm) = first_positions(&kernel, &space, "other", 64, Some(at(1)));
        assert!(first.contains(&at(5)));
        assert_eq!(warm.unwrap().1, "1 other device (key 64)");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Reproducible tuning: the kernel's seed reaches the strategy through its options, so two
    /// tunings with the same seed ask for the same configurations in the same order when they
    /// measure the same results (a replayed landscape, no timing noise), and another seed asks
    /// for others. The default seed is the one every tuning used before there was a setting.
    #[test]
    fn the_same_seed_asks_for_the_same_configurations_in_the_same_order() {
        use crate::tuner::{Closure, Progress, tune};
        use tunable_search::sim::Replay;
        use tunable_search::strategy::Trial;
        let build = || {
            tunable_search::SpaceBuilder::new()
                .param("a", 0..12)
                .param("b", 0..12)
                .param("c", [1, 2, 4, 8])
                .constraint("a * c <= 60")
                .build()
                .unwrap()
        };
        let space = Arc::new(build());
        // A rugged landscape, the same on every replay.
        let values = (0..space.len())
            .map(|p| Some(1.0 + (p.wrapping_mul(2_654_435_761) % 997) as f64 / 100.0))
            .collect();
        let replay = Replay::from_values(build(), values);
        let (fake, _, _) = fake_kernel("hook_seed", 1);
        assert_eq!(fake.seed, TuneOptions::default().seed);
        assert_eq!(fake.seed, tunable_search::defaults::SEED);
        let asked = |strategy: &'static str, seed: u64| {
            let kernel = KernelSpec {
                strategy,
                seed,
                budget: 40,
                ..fake_kernel("hook_seed", 1).0
            };
            // (`TUNABLE_SEED`, were it set, would override the kernel's seed in both runs.)
            let opts = TuneOptions {
                batch: 1,
                ..kernel.options(&space).unwrap()
            };
            let mut order = Vec::new();
            let mut seen = |_: &Progress, t: &Trial, _: &Evaluation| order.push(t.position);
            let mut replayed = Closure(|p: usize| {
                replay.values()[p].ok_or_else(|| "not in the landscape".to_owned())
            });
            tune(&space, &opts, &mut replayed, &mut [&mut seen]).unwrap();
            order
        };
        for strategy in ["auto", "random", "genetic"] {
            let first = asked(strategy, 7);
            assert_eq!(first.len(), 40, "{strategy}");
            assert_eq!(asked(strategy, 7), first, "{strategy}: the same seed");
            assert_ne!(asked(strategy, 8), first, "{strategy}: another seed");
        }
    }

    #[test]
    fn the_kept_list_starts_with_the_confirmed_winner_at_its_confirmed_time() {
        // The tuning ranked 7 first (a lucky 1.0 ms); the confirmation picked 4 at 1.2 ms.
        let top = [(7, 1.0), (4, 1.1), (9, 2.0)];
        assert_eq!(
            confirmed_top((4, 1.2), &top),
            [(4, 1.2), (7, 1.0), (9, 2.0)]
        );
        // A winner the tuning ranked first keeps its place, once.
        assert_eq!(
            confirmed_top((7, 1.05), &top),
            [(7, 1.05), (4, 1.1), (9, 2.0)]
        );
    }
}
