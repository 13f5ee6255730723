//! # Devices nobody tuned on
//!
//! A shipped binary (built without the `autotune` feature) carries, beside its baked table, a
//! *portable set* per kernel and key: up to [`SHIPPED`](tunable_search::portable::SHIPPED)
//! configurations the macro chose at build time from the best configurations of every device in
//! the tuned file ([`tunable_search::portable::shipped`]). What [`Shipped::run`] runs:
//!
//! - on a device that has entries in the baked table: its own entry for the key (else its
//!   nearest key), as [`baked`] always did;
//! - on any other device, on the first call for a key: each configuration of the set (of the
//!   nearest key) once on the call's own arguments, timed; the fastest runs from then on, for
//!   the rest of the process, and one line on stderr says so. A configuration that fails is
//!   skipped. With `TUNABLE_MODE=off` nothing is timed: the set's first configuration (the best
//!   compromise over the tuned devices) runs.
//!
//! Without a portable set (a tuned file written before the sets, or no tuned file) this is
//! [`baked`], and a single-device table never asks for the device.
//!
//! Every configuration it answers from the table or a set comes with its instance, the copy of
//! the kernel's body the macro compiled with that configuration as constants
//! ([`Variant::instance`]); only the default runs the generic body.
//!
//! For a kernel on this CPU the answer for a key never changes in a process (the device is read
//! once, a portable choice is kept), so each thread remembers the last key it asked about and its
//! answer ([`Last`]): a call with the same key as the one before costs a thread-local read and a
//! comparison, not a walk of the table and a comparison of device names. A kernel whose device
//! is an expression over the arguments (a GPU kernel) may run on another device at the next
//! call, and asks every time.

use super::lookup::{Baked, Variant, baked, key_distance};
use crate::params::Params;
use crate::settings::{self, Mode};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::LocalKey;
use std::time::Instant;

/// Runs one configuration (through its instance) on the call's arguments: `Err` with the
/// reason if it failed (the `Ok` answer, as the tuning closure's, is not used here).
pub type RunOne<'r, P> = dyn FnMut(&Variant<P>) -> Result<Option<Vec<f64>>, String> + 'r;

/// The portable set baked for one key.
#[derive(Debug)]
pub struct Portable<P: 'static> {
    /// Problem-size key.
    pub key: u64,
    /// The configurations with their instances, best compromise first.
    pub candidates: &'static [Variant<P>],
}

/// The last key a thread asked [`Shipped::run`] about for one kernel, and the answer: generated code
/// holds one per kernel in a `thread_local!` (`const`-initialized, so reading it is a plain
/// thread-local access).
pub struct Last<P>(Cell<Option<(u64, Variant<P>)>>);

impl<P: Copy> Last<P> {
    /// Nothing asked yet.
    pub const fn new() -> Self {
        Last(Cell::new(None))
    }
}

impl<P: Copy> Default for Last<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// What a shipped build knows of a kernel: its name (for the stderr line), its baked table, its
/// portable sets and its default configuration. The code `#[tunable]` generates holds one in a
/// `static`, for the entry point and for `<kernel>_config`.
#[derive(Debug)]
pub struct Shipped<P: 'static> {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The baked table.
    pub table: &'static [Baked<P>],
    /// The portable sets, one per key.
    pub portable: &'static [Portable<P>],
    /// The default configuration.
    pub default: P,
}

impl<P: Params> Shipped<P> {
    /// What a shipped call for `key` on `device` runs; see the [module docs](self). `run` runs
    /// one configuration on the call's arguments (restoring them first), `Err` with the reason
    /// if it failed; `last`, for a kernel whose device cannot change between calls, is its
    /// [`Last`] answer on this thread, which answers a call with the same key at once.
    ///
    /// # Panics
    /// If the set must be timed and `TUNABLE_MODE` holds an unknown value (as in a tuning
    /// build).
    #[inline]
    pub fn run<D: AsRef<str>>(
        &self,
        key: u64,
        device: impl FnOnce() -> D,
        run: &mut RunOne<'_, P>,
        last: Option<&'static LocalKey<Last<P>>>,
    ) -> Variant<P> {
        let Some(last) = last else {
            return self.select(key, device, run);
        };
        let known = last
            .try_with(|l| l.0.get())
            .ok()
            .flatten()
            .filter(|(k, _)| *k == key);
        if let Some((_, v)) = known {
            return v;
        }
        let v = self.select(key, device, run);
        let _ = last.try_with(|l| l.0.set(Some((key, v))));
        v
    }

    /// [`run`](Self::run)'s answer for a key it has not seen last on this thread.
    #[inline(never)]
    fn select<D: AsRef<str>>(
        &self,
        key: u64,
        device: impl FnOnce() -> D,
        run: &mut RunOne<'_, P>,
    ) -> Variant<P> {
        if self.portable.is_empty() {
            return baked(self.table, key, self.default, device);
        }
        let device = device();
        let device = device.as_ref();
        if self.table.iter().any(|b| b.device == device) {
            return baked(self.table, key, self.default, || device);
        }
        self.choose(device, key, run, || {
            settings::mode().unwrap_or_else(|e| panic!("tunable: {e}"))
        })
        .unwrap_or_else(|| baked(self.table, key, self.default, || device))
    }

    /// What a shipped call on `device` would run from the portable sets, without running
    /// anything: `None` if the device has a baked entry or no set is baked; else the
    /// configuration chosen earlier in this process (`true`) or the set's first candidate
    /// (`false`).
    pub(crate) fn peek(&self, device: &str, key: u64) -> Option<(P, bool)> {
        if self.table.iter().any(|b| b.device == device) {
            return None;
        }
        let first = nearest_set(self.portable, key)?.candidates.first()?.params;
        Some(
            chosen_before::<P>(self.kernel, device, key)
                .map_or((first, false), |v| (v.params, true)),
        )
    }

    /// The configuration of the portable set (of the key nearest `key`) chosen on `device` for
    /// `key`: chosen earlier in this process, the first with [`Mode::Off`], else the fastest of
    /// the set timed now. `None` for an empty set.
    fn choose(
        &self,
        device: &str,
        key: u64,
        run: &mut RunOne<'_, P>,
        mode: impl FnOnce() -> Mode,
    ) -> Option<Variant<P>> {
        let kernel = self.kernel;
        let set = nearest_set(self.portable, key)?;
        let first = *set.candidates.first()?;
        let slot = (kernel, device.to_owned(), key);
        if let Some(p) = chosen_before(kernel, device, key) {
            return Some(p);
        }
        if mode() == Mode::Off {
            return Some(first);
        }
        let mut best: Option<(Variant<P>, f64)> = None;
        let mut failed = 0;
        for p in set.candidates {
            let start = Instant::now();
            match run(p) {
                Ok(_) => {
                    let ms = start.elapsed().as_secs_f64() * 1e3;
                    if best.is_none_or(|(_, b)| ms < b) {
                        best = Some((*p, ms));
                    }
                }
                Err(_) => failed += 1,
            }
        }
        let (chosen, ms) = best.unwrap_or((first, f64::NAN));
        let mut slots = CHOSEN.lock().unwrap_or_else(|e| e.into_inner());
        let slots = slots.get_or_insert_with(HashMap::new);
        if let Some((v, instance)) = slots.get(&slot) {
            // Another thread timed the set meanwhile: its choice stands, and it said so.
            return Some(P::from_values(v).map_or(chosen, |params| Variant {
                params,
                instance: *instance,
            }));
        }
        slots.insert(slot, (chosen.params.to_values(), chosen.instance));
        let failures = if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        };
        eprintln!(
            "tunable: {kernel} has no tuned configuration for device {device:?}: timed the {} portable configurations once on key {key}{failures}; running {} ({ms:.3} ms) from now on",
            set.candidates.len(),
            chosen.params.describe()
        );
        Some(chosen)
    }
}

/// The portable set of the key nearest `key`.
fn nearest_set<P>(portable: &'static [Portable<P>], key: u64) -> Option<&'static Portable<P>> {
    portable
        .iter()
        .min_by(|a, b| key_distance(a.key, key).total_cmp(&key_distance(b.key, key)))
}

/// The configuration chosen earlier in this process for `kernel` on `device` and `key`.
fn chosen_before<P: Params>(kernel: &'static str, device: &str, key: u64) -> Option<Variant<P>> {
    let slots = CHOSEN.lock().unwrap_or_else(|e| e.into_inner());
    let (values, instance) = slots.as_ref()?.get(&(kernel, device.to_owned(), key))?;
    P::from_values(values).map(|params| Variant {
        params,
        instance: *instance,
    })
}

/// Per slot, the chosen configuration's values and instance.
type Chosen = HashMap<(&'static str, String, u64), (Vec<tunable_search::Value>, Option<u16>)>;

static CHOSEN: Mutex<Option<Chosen>> = Mutex::new(None);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuner::lookup::Origin;
    use crate::tuner::testing::Tile;
    use std::time::Duration;

    static TABLE: [Baked<Tile>; 1] = [Baked {
        device: "tuned",
        key: 64,
        params: Tile(1),
        instance: 0,
    }];

    /// Tile `t` as compiled into instance `t`.
    const fn tile(t: i64) -> Variant<Tile> {
        Variant {
            params: Tile(t),
            instance: Some(t as u16),
        }
    }

    /// Kernel `kernel` with [`TABLE`] and [`PORTABLE`] (or no portable set), default tile 0.
    const fn kernel(kernel: &'static str, portable: &'static [Portable<Tile>]) -> Shipped<Tile> {
        Shipped {
            kernel,
            table: &TABLE,
            portable,
            default: Tile(0),
        }
    }

    static PORTABLE: [Portable<Tile>; 2] = [
        Portable {
            key: 64,
            candidates: &[tile(2), tile(3), tile(4)],
        },
        Portable {
            key: 4096,
            candidates: &[tile(5)],
        },
    ];

    /// Tile 4 is the fastest, tile 3 fails.
    fn timed(
        runs: &mut Vec<i64>,
    ) -> impl FnMut(&Variant<Tile>) -> Result<Option<Vec<f64>>, String> + '_ {
        |v| {
            let Tile(t) = v.params;
            assert_eq!(
                v.instance,
                Some(t as u16),
                "a candidate runs its own instance"
            );
            runs.push(t);
            if t == 3 {
                return Err("launch failed".into());
            }
            std::thread::sleep(Duration::from_millis(if t == 4 { 1 } else { 20 }));
            Ok(None)
        }
    }

    #[test]
    fn a_tuned_device_runs_its_entry_without_timing() {
        thread_local! {
            static LAST: Last<Tile> = const { Last::new() };
        }
        static TUNED: Shipped<Tile> = kernel("k_tuned", &PORTABLE);
        static NO_SET: Shipped<Tile> = kernel("k_tuned", &[]);
        let mut runs = Vec::new();
        let p = TUNED.run(100, || "tuned", &mut timed(&mut runs), Some(&LAST));
        assert_eq!((p, runs.len()), (Variant::of(&TABLE[0]), 0));
        // No portable set: the baked table, as always.
        let p = NO_SET.select(100, || "other", &mut timed(&mut runs));
        assert_eq!((p, runs.len()), (Variant::of(&TABLE[0]), 0));
    }

    #[test]
    fn the_same_key_again_is_answered_without_asking_the_device() {
        thread_local! {
            static LAST: Last<Tile> = const { Last::new() };
        }
        static K: Shipped<Tile> = kernel("k_last", &PORTABLE);
        let mut runs = Vec::new();
        let mut call =
            |key, device: &'static str| K.run(key, || device, &mut timed(&mut runs), Some(&LAST));
        assert_eq!(call(100, "tuned"), Variant::of(&TABLE[0]));
        // The device is not asked again (another would have timed the portable set)...
        assert_eq!(call(100, "unseen"), Variant::of(&TABLE[0]));
        // ...until another key is asked for.
        assert_eq!(call(5000, "unseen"), tile(5));
        assert_eq!(runs, [5]);
        // Another thread remembers its own.
        std::thread::spawn(|| assert_eq!(LAST.with(|l| l.0.get()), None))
            .join()
            .unwrap();
    }

    #[test]
    fn an_unseen_device_times_the_set_once_and_keeps_the_fastest() {
        static K: Shipped<Tile> = kernel("k_unseen", &PORTABLE);
        let mut runs = Vec::new();
        let tune = || Mode::Tune;
        let p = K.choose("new", 100, &mut timed(&mut runs), tune);
        assert_eq!(p, Some(tile(4)));
        assert_eq!(runs, [2, 3, 4]);
        // Later calls for the key: no timing.
        let p = K.choose("new", 100, &mut timed(&mut runs), tune);
        assert_eq!((p, runs.len()), (Some(tile(4)), 3));
        // Another key, nearest to 4096: its own set, timed once.
        let p = K.choose("new", 3000, &mut timed(&mut runs), tune);
        assert_eq!((p, &runs[3..]), (Some(tile(5)), &[5][..]));
    }

    #[test]
    fn the_choice_query_names_the_portable_pick_before_and_after_timing() {
        static K: Shipped<Tile> = kernel("k_peek", &PORTABLE);
        static NO_SET: Shipped<Tile> = kernel("k_peek", &[]);
        let choice = |device: &str| crate::choice::shipped(&K, 100, || device.to_owned());
        assert_eq!(K.peek("tuned", 100), None);
        assert_eq!(choice("tuned").origin, Origin::Baked);
        // Before the first call on this device: the first candidate, not timed.
        let before = choice("new");
        assert_eq!(
            (before.params, before.origin),
            (Tile(2), Origin::Portable { timed: false })
        );
        let mut runs = Vec::new();
        K.choose("new", 100, &mut timed(&mut runs), || Mode::Tune);
        let after = choice("new");
        assert_eq!(
            (after.params, after.origin),
            (Tile(4), Origin::Portable { timed: true })
        );
        // Without portable sets, an untuned device gets the nearest baked entry.
        let none = crate::choice::shipped(&NO_SET, 100, || "new");
        assert_eq!((none.params, none.origin), (Tile(1), Origin::Baked));
    }

    #[test]
    fn mode_off_runs_the_first_candidate_without_timing() {
        static K: Shipped<Tile> = kernel("k_off", &PORTABLE);
        static NO_SET: Shipped<Tile> = kernel("k_off", &[]);
        let mut runs = Vec::new();
        let p = K.choose("new", 64, &mut timed(&mut runs), || Mode::Off);
        assert_eq!((p, runs.len()), (Some(tile(2)), 0));
        assert_eq!(
            NO_SET.choose("new", 64, &mut timed(&mut runs), || Mode::Tune),
            None
        );
    }
}
