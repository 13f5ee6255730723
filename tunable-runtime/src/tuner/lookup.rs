//! # Where a call's configuration comes from
//!
//! Before anything is tuned, a call of a `#[tunable]` kernel (with the `autotune` feature) looks
//! its slot (kernel, device, problem-size key) up, and [`Lookup::find`] answers in one of three
//! states, as CubeCL's autotuner does:
//!
//! - [`Lookup::Hit`]: a configuration is known, with its [`Origin`]: tuned earlier in this
//!   process, baked into the binary, or stored in the tuned file by an earlier run (with
//!   `TUNABLE_MODE=off`, the baked table or the default, always);
//! - [`Lookup::Pending`]: another caller is tuning this slot right now, or this thread is in
//!   the middle of tuning (a tunable kernel called by a variant of another): run the fallback it
//!   carries (the baked table's nearest entry, or the default), without waiting and without
//!   disturbing the measurement;
//! - [`Lookup::Miss`]: nothing is known and the slot is now claimed by this caller, who tunes
//!   it and [`Claim::settle`]s it; a claim dropped unsettled frees the slot again.
//!
//! Tunings of different slots run one at a time in a process ([`Claim::exclusively`]), so that
//! two never time their variants against each other.

// The shipped half (`Baked`, `baked`, `Origin`) is in every build; the tuning half (`Lookup`,
// `peek`, the process's slots) only with the `autotune` feature.
#[cfg(feature = "autotune")]
use {
    super::spec::KernelSpec,
    crate::params::Params,
    crate::settings::Mode,
    crate::store::{read, tuned_dir, tuned_file},
    std::cell::Cell,
    std::collections::HashMap,
    std::sync::Mutex,
    tunable_search::{Space, Value},
};

/// One baked configuration: an entry of the table generated code carries.
#[derive(Debug)]
pub struct Baked<P: 'static> {
    /// Device it was tuned on.
    pub device: &'static str,
    /// Problem-size key.
    pub key: u64,
    /// The configuration.
    pub params: P,
    /// Which copy of the kernel's body, instantiated with `params` as constants, a shipped
    /// build runs for this entry (an index into the generated code's instances).
    pub instance: u16,
}

/// What a shipped call runs: a configuration, and the copy of the kernel's body instantiated
/// with it as constants (`Some(index)`), or `None` for the generic body, which takes the
/// parameters as run-time values (the default configuration, or a table without entries).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant<P> {
    /// The configuration.
    pub params: P,
    /// The instance of the body compiled with `params` as constants, if there is one.
    pub instance: Option<u16>,
}

impl<P> Variant<P> {
    /// The baked entry's configuration and instance.
    pub fn of(baked: &Baked<P>) -> Self
    where
        P: Copy,
    {
        Variant {
            params: baked.params,
            instance: Some(baked.instance),
        }
    }

    /// `params` run by the generic body.
    pub fn generic(params: P) -> Self {
        Variant {
            params,
            instance: None,
        }
    }
}

/// Where a configuration comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Tuned in this process.
    Tuned,
    /// The baked table of the binary.
    Baked,
    /// The tuned file, stored by an earlier run.
    Stored,
    /// The kernel's default configuration.
    Default,
    /// The portable set of a shipped binary on a device with no tuned entry: the fastest of the
    /// set once the first call for this key has timed it, its first candidate before (the one
    /// `TUNABLE_MODE=off` runs).
    Portable {
        /// Whether the set has been timed on this device and key by this process.
        timed: bool,
    },
}

#[cfg(feature = "autotune")]
/// The state of a slot; see the [module docs](self).
#[derive(Debug)]
pub enum Lookup<P> {
    /// A configuration is known.
    Hit(P, Origin),
    /// Being tuned by another caller (or this thread is tuning): run this fallback.
    Pending(P),
    /// Claimed by this caller, to tune.
    Miss(Claim),
}

#[cfg(feature = "autotune")]
type Slot = (&'static str, String, u64);

#[cfg(feature = "autotune")]
#[derive(Debug)]
enum State {
    Pending,
    Settled(Vec<Value>, Origin),
}

#[cfg(feature = "autotune")]
static SLOTS: Mutex<Option<HashMap<Slot, State>>> = Mutex::new(None);
#[cfg(feature = "autotune")]
static TUNING: Mutex<()> = Mutex::new(());

#[cfg(feature = "autotune")]
thread_local! {
    /// Whether this thread is running a tuning.
    static TUNING_HERE: Cell<bool> = const { Cell::new(false) };
}

#[cfg(feature = "autotune")]
fn with_slots<R>(f: impl FnOnce(&mut HashMap<Slot, State>) -> R) -> R {
    let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    f(slots.get_or_insert_with(HashMap::new))
}

#[cfg(feature = "autotune")]
impl<P: Params> Lookup<P> {
    /// The state of the slot (`kernel`, `device`, `key`) under `mode`; `table` is the baked
    /// table and `default` the kernel's default configuration. Never fails: a damaged tuned file
    /// is reported on stderr and treated as holding nothing.
    pub fn find(
        kernel: &KernelSpec,
        space: &Space,
        device: &str,
        key: u64,
        table: &'static [Baked<P>],
        default: P,
        mode: Mode,
    ) -> Self {
        let fallback = || fallback(table, key, device, default);
        if mode == Mode::Off {
            let (p, origin) = fallback();
            return Lookup::Hit(p, origin);
        }
        if TUNING_HERE.get() {
            return Lookup::Pending(fallback().0);
        }
        let slot: Slot = (kernel.name, device.to_owned(), key);
        match state(&slot, true) {
            Some(Some((values, origin))) => {
                let (p, origin) = settled(&values, origin, default);
                return Lookup::Hit(p, origin);
            }
            Some(None) => return Lookup::Pending(fallback().0),
            None => {}
        }
        let claim = Claim {
            slot,
            settled: false,
        };
        if mode == Mode::Tune
            && let Some((p, origin)) = known(kernel, space, device, key, table)
        {
            claim.settle(&p, origin);
            return Lookup::Hit(p, origin);
        }
        Lookup::Miss(claim)
    }
}

#[cfg(feature = "autotune")]
/// What [`Lookup::find`] would answer now, without claiming the slot: `Ok` with the known
/// configuration and its origin, or `Err` with the fallback when the call would tune (or find
/// another caller tuning). Reads the tuned file like `find`; changes nothing.
pub fn peek<P: Params>(
    kernel: &KernelSpec,
    space: &Space,
    device: &str,
    key: u64,
    table: &'static [Baked<P>],
    default: P,
    mode: Mode,
) -> Result<(P, Origin), P> {
    if mode == Mode::Off {
        return Ok(fallback(table, key, device, default));
    }
    let slot: Slot = (kernel.name, device.to_owned(), key);
    match state(&slot, false) {
        Some(Some((values, origin))) => Ok(settled(&values, origin, default)),
        Some(None) => Err(fallback(table, key, device, default).0),
        None if mode == Mode::Tune => known(kernel, space, device, key, table)
            .ok_or_else(|| fallback(table, key, device, default).0),
        None => Err(fallback(table, key, device, default).0),
    }
}

#[cfg(feature = "autotune")]
/// The slot's state in this process: `Some(Some(settled))`, `Some(None)` while pending, `None`
/// if unknown, in which case `claim` marks it pending for the caller.
fn state(slot: &Slot, claim: bool) -> Option<Option<(Vec<Value>, Origin)>> {
    with_slots(|slots| match slots.get(slot) {
        Some(State::Settled(values, origin)) => Some(Some((values.clone(), *origin))),
        Some(State::Pending) => Some(None),
        None => {
            if claim {
                slots.insert(slot.clone(), State::Pending);
            }
            None
        }
    })
}

/// What runs while nothing better is known: the nearest baked entry, else the default.
pub(crate) fn fallback<P: Copy>(
    table: &'static [Baked<P>],
    key: u64,
    device: &str,
    default: P,
) -> (P, Origin) {
    match pick(table, key, || device) {
        Some(b) => (b.params, Origin::Baked),
        None => (default, Origin::Default),
    }
}

#[cfg(feature = "autotune")]
/// A configuration settled earlier in this process, from its values (the default if they no
/// longer decode).
fn settled<P: Params>(values: &[Value], origin: Origin, default: P) -> (P, Origin) {
    P::from_values(values).map_or((default, Origin::Default), |p| (p, origin))
}

#[cfg(feature = "autotune")]
/// What is known for the slot without tuning, under `TUNABLE_MODE=tune`: the baked entry of
/// this very device and key, else the tuned file's.
fn known<P: Params>(
    kernel: &KernelSpec,
    space: &Space,
    device: &str,
    key: u64,
    table: &'static [Baked<P>],
) -> Option<(P, Origin)> {
    match table.iter().find(|b| b.device == device && b.key == key) {
        Some(b) => Some((b.params, Origin::Baked)),
        None => stored(kernel, space, device, key).map(|p| (p, Origin::Stored)),
    }
}

#[cfg(feature = "autotune")]
/// The configuration the tuned file holds for the slot in this space, if any and if it was
/// tuned with the kernel's source files as they are now (`KernelSpec::sources`): an entry of an
/// edited source is tuned again.
fn stored<P: Params>(kernel: &KernelSpec, space: &Space, device: &str, key: u64) -> Option<P> {
    let read = tuned_file(&tuned_dir(kernel.manifest_dir), kernel.name)
        .map_err(crate::RuntimeError::from)
        .and_then(|path| read(&path));
    match read {
        Ok(entries) => entries
            .iter()
            .find(|e| {
                e.kernel == kernel.name
                    && e.device == device
                    && e.key == key
                    && e.space_hash == space.fingerprint()
                    && e.is_current(kernel.sources)
            })
            .and_then(|e| P::from_values(&e.values())),
        Err(e) => {
            eprintln!("tunable: {e}; tuning {} again", kernel.name);
            None
        }
    }
}

#[cfg(feature = "autotune")]
/// A slot claimed for tuning by one caller; see the [module docs](self).
#[derive(Debug)]
pub struct Claim {
    slot: Slot,
    settled: bool,
}

#[cfg(feature = "autotune")]
impl Claim {
    /// Records the slot's configuration for the rest of the process.
    pub fn settle<P: Params>(mut self, params: &P, origin: Origin) {
        let values = params.to_values();
        with_slots(|slots| slots.insert(self.slot.clone(), State::Settled(values, origin)));
        self.settled = true;
    }

    /// Runs `f` (the tuning) as the only tuning of the process: another waits for it to end,
    /// and a tunable call on this thread meanwhile finds its slot [`Lookup::Pending`].
    pub fn exclusively<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Here;
        impl Drop for Here {
            fn drop(&mut self) {
                TUNING_HERE.set(false);
            }
        }
        let _one = TUNING.lock().unwrap_or_else(|e| e.into_inner());
        TUNING_HERE.set(true);
        let _here = Here;
        f()
    }
}

#[cfg(feature = "autotune")]
impl Drop for Claim {
    fn drop(&mut self) {
        if !self.settled {
            with_slots(|slots| slots.remove(&self.slot));
        }
    }
}

/// The baked entry for `key`: the entry of this device (any device if none is for this one)
/// with the same key, else the one with the nearest key (by ratio). `device` is asked only if
/// the table holds several devices.
pub(crate) fn pick<P, D: AsRef<str>>(
    table: &'static [Baked<P>],
    key: u64,
    device: impl FnOnce() -> D,
) -> Option<&'static Baked<P>> {
    match table {
        [] => None,
        [only] => Some(only),
        _ => {
            let multi = table.iter().any(|b| b.device != table[0].device);
            let asked = multi.then(device);
            let dev = asked.as_ref().map_or(table[0].device, AsRef::as_ref);
            let mine = table.iter().any(|b| b.device == dev);
            table
                .iter()
                .filter(|b| !mine || b.device == dev)
                .min_by(|a, b| key_distance(a.key, key).total_cmp(&key_distance(b.key, key)))
        }
    }
}

/// How far apart two problem-size keys are: the absolute logarithm of their ratio.
pub(super) fn key_distance(a: u64, b: u64) -> f64 {
    (a.max(1) as f64 / b.max(1) as f64).ln().abs()
}

/// The baked configuration for `key`, without tuning and without I/O unless the table holds
/// several devices (only then is `device` asked): the entry of this device (any device if none
/// is for this one) with the same key, else the one with the nearest key (by ratio), with its
/// instance; else `default`, run by the generic body. What a shipped binary runs.
#[inline]
pub fn baked<P: Copy, D: AsRef<str>>(
    table: &'static [Baked<P>],
    key: u64,
    default: P,
    device: impl FnOnce() -> D,
) -> Variant<P> {
    pick(table, key, device).map_or(Variant::generic(default), Variant::of)
}

#[cfg(all(test, feature = "autotune"))]
mod tests {
    use super::*;
    use crate::tuner::testing::Tile;

    static TABLE: [Baked<u32>; 3] = [
        Baked {
            device: "a",
            key: 64,
            params: 1,
            instance: 0,
        },
        Baked {
            device: "a",
            key: 1024,
            params: 2,
            instance: 1,
        },
        Baked {
            device: "b",
            key: 64,
            params: 3,
            instance: 2,
        },
    ];

    #[test]
    fn baked_prefers_this_device_then_the_nearest_key() {
        let run = |table, key, device| {
            let v = baked(table, key, 0, || device);
            (v.params, v.instance)
        };
        assert_eq!(run(&TABLE, 100, "a"), (1, Some(0)));
        assert_eq!(run(&TABLE, 900, "a"), (2, Some(1)));
        assert_eq!(run(&TABLE, 900, "b"), (3, Some(2)));
        assert_eq!(run(&TABLE, 900, "c"), (2, Some(1)));
        let only = baked(&TABLE[..1], 1, 0, || -> &str { unreachable!() });
        assert_eq!(only, Variant::of(&TABLE[0]));
        // Nothing baked: the default, run by the generic body.
        assert_eq!(baked(&[], 1, 7, || "a"), Variant::generic(7));
    }

    static TILES: [Baked<Tile>; 1] = [Baked {
        device: "dev",
        key: 8,
        params: Tile(4),
        instance: 0,
    }];

    fn kernel(name: &'static str) -> KernelSpec {
        KernelSpec {
            name,
            manifest_dir: "/nonexistent/tunable-lookup-test",
            budget: 4,
            strategy: "random",
            seed: 1,
            metrics: &[],
            objectives: &["time"],
            prefer: None,
            repeats: 1,
            warmup: 0,
            verify: crate::tuner::Verify::Off,
            body: 0,
            device_given: false,
            sources: &[],
        }
    }

    #[test]
    fn a_slot_is_missed_once_pending_meanwhile_and_settled_after() {
        let k = kernel("lookup_states");
        let space = tunable_search::SpaceBuilder::new()
            .param("tile", [1, 2, 4])
            .build()
            .unwrap();
        let find = |key, mode| Lookup::find(&k, &space, "dev", key, &TILES, Tile(1), mode);
        // Off: the baked table (nearest key), never a claim.
        assert!(matches!(
            find(100, Mode::Off),
            Lookup::Hit(Tile(4), Origin::Baked)
        ));
        // Tune: the exact baked entry is a hit, and settled for the process.
        assert!(matches!(
            find(8, Mode::Tune),
            Lookup::Hit(Tile(4), Origin::Baked)
        ));
        // Nothing for key 16: claimed; a second caller meanwhile gets the fallback.
        let Lookup::Miss(claim) = find(16, Mode::Tune) else {
            panic!("expected a miss")
        };
        assert!(matches!(find(16, Mode::Tune), Lookup::Pending(Tile(4))));
        // While this thread tunes, any tunable call on it runs its fallback.
        claim.exclusively(|| {
            assert!(matches!(find(32, Mode::Retune), Lookup::Pending(Tile(4))));
        });
        // A claim dropped unsettled frees the slot; a settled one answers from then on.
        drop(claim);
        let Lookup::Miss(claim) = find(16, Mode::Retune) else {
            panic!("the slot was not freed")
        };
        claim.settle(&Tile(2), Origin::Tuned);
        assert!(matches!(
            find(16, Mode::Tune),
            Lookup::Hit(Tile(2), Origin::Tuned)
        ));
    }
}
