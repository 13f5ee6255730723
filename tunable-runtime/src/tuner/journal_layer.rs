//! # The journal in front of an evaluator
//!
//! [`Journaled`] wraps any evaluator: what the journal (or this run) already knows is answered
//! without measuring, the rest goes to the inner evaluator as one batch, and every new result
//! is appended to the journal. A journal that cannot be written any more is dropped with a
//! warning: the measurements in hand are worth more than the file.
//!
//! In a tuning with a meter ([`Metering`]), an answer carries the energy that was measured
//! with it: this run's, or the journal's fields of the tuning's meter ([`quantities`]). A
//! successful record without them answers nothing: the configuration is measured again, so
//! that a configuration ranked by energy always has one that was measured.

use super::metering::Metering;
use super::{EnergyUse, Evaluation};
use crate::evaluation;
use crate::journal::{Journal, Quantities};
use crate::meter::Clocks;
use std::collections::HashMap;
use tunable_search::strategy::Evaluator;

/// An evaluator in front of another: what the journal (or this run) already knows is answered
/// without measuring, the rest goes to the inner evaluator as one batch, and every new result
/// is appended to the journal. A journal that cannot be written any more is dropped with a
/// warning: the measurements in hand are worth more than the file.
#[derive(Debug)]
pub struct Journaled<E> {
    journal: Option<Journal>,
    known: HashMap<usize, Result<f64, String>>,
    /// The energy measured in this run, by position.
    energies: HashMap<usize, EnergyUse>,
    inner: E,
    measured: usize,
}

impl<E> Journaled<E> {
    /// `inner` behind `journal` (with `None`, results are still remembered for this run).
    pub fn new(journal: Option<Journal>, inner: E) -> Self {
        Journaled {
            journal,
            known: HashMap::new(),
            energies: HashMap::new(),
            inner,
            measured: 0,
        }
    }

    /// How many configurations the inner evaluator measured.
    pub fn measured(&self) -> usize {
        self.measured
    }

    /// The result this run has for the configuration at `position`, if it was evaluated.
    pub fn result(&self, position: usize) -> Option<&Result<f64, String>> {
        self.known.get(&position)
    }

    /// The inner evaluator.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// The inner evaluator, to re-time configurations with, say.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// What this run or the journal knows of the configuration at `position`, with the energy
    /// measured with it; `None` where it is to be measured (with a meter, a success whose
    /// energy is not known too).
    fn lookup(
        &self,
        position: usize,
        metering: Option<&Metering>,
    ) -> Option<(Result<f64, String>, Option<EnergyUse>)> {
        if let Some(r) = self.known.get(&position) {
            return Some((r.clone(), self.energies.get(&position).copied()));
        }
        let journal = self.journal.as_ref()?;
        let r = journal.lookup(position)?;
        let energy = metering.and_then(|m| energy_of(journal.fields(position), m));
        let unmeasured = metering.is_some() && r.is_ok() && energy.is_none();
        (!unmeasured).then(|| (r.clone(), energy))
    }

    fn remember(&mut self, position: usize, e: &Evaluation) {
        let result = &e.result;
        let fields = e
            .energy
            .zip(metering())
            .map_or_else(Vec::new, |(used, m)| fields(&used, &m));
        if let Some(used) = e.energy {
            self.energies.insert(position, used);
        }
        if let Some(j) = &mut self.journal
            && let Err(e) = j.record_fields(
                position,
                result.as_ref().copied().map_err(String::as_str),
                &e.runs,
                &fields,
            )
        {
            eprintln!("tunable: {e}; tuning on without the journal");
            self.journal = None;
        }
        self.known.insert(position, result.clone());
    }
}

/// The tuning's meter, from the evaluation context.
fn metering() -> Option<Metering> {
    evaluation::with(|c| c.meter.clone()).flatten()
}

/// The quantities a journal of a tuning with `metering` reads back: the energy and power it
/// needs, the clocks where they were read (the names of [`fields`]).
pub(crate) fn quantities(metering: &Metering) -> Quantities {
    Quantities {
        needed: vec![metering.energy_field(), metering.power_field()],
        optional: vec![CORE_CLOCK.to_owned(), MEMORY_CLOCK.to_owned()],
    }
}

/// Kernel Tuner's name of the graphics clock read during the runs, in MHz.
const CORE_CLOCK: &str = "core_freq";
/// Kernel Tuner's name of the memory clock read during the runs, in MHz.
const MEMORY_CLOCK: &str = "mem_freq";

/// What one run used, from a record's `fields` as [`fields`] wrote them for `metering`;
/// `None` without its energy and power.
fn energy_of(fields: &[(String, f64)], metering: &Metering) -> Option<EnergyUse> {
    let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let mhz = |name| get(name).map(|v| v as u32);
    Some(EnergyUse {
        joules: get(&metering.energy_field())?,
        watts: get(&metering.power_field())?,
        clocks: mhz(CORE_CLOCK)
            .zip(mhz(MEMORY_CLOCK))
            .map(|(graphics_mhz, memory_mhz)| Clocks {
                graphics_mhz,
                memory_mhz,
            }),
    })
}

/// The journal's fields of what one run used, by Kernel Tuner's names for NVML's
/// (`nvml_energy`, `nvml_power`) and the same pattern for other meters (`rapl_energy`); the
/// clocks read during the runs by the names of Kernel Tuner's observed clocks (`core_freq`,
/// `mem_freq`, in MHz), as `nvml_gr_clock` and `nvml_mem_clock` name the clock parameters.
fn fields(used: &EnergyUse, metering: &Metering) -> Vec<(String, f64)> {
    let mut fields = vec![
        (metering.energy_field(), used.joules),
        (metering.power_field(), used.watts),
    ];
    if let Some(c) = used.clocks {
        fields.push((CORE_CLOCK.to_owned(), f64::from(c.graphics_mhz)));
        fields.push((MEMORY_CLOCK.to_owned(), f64::from(c.memory_mhz)));
    }
    fields
}

impl<E: Evaluator<Report = Evaluation>> Evaluator for Journaled<E> {
    type Report = Evaluation;
    type Error = E::Error;

    fn evaluate(&mut self, positions: &[usize]) -> Result<Vec<Evaluation>, E::Error> {
        let metering = metering();
        let mut out: Vec<Option<Evaluation>> = Vec::with_capacity(positions.len());
        for &p in positions {
            let answer = self.lookup(p, metering.as_ref());
            if let Some((r, energy)) = &answer {
                self.known.insert(p, r.clone());
                if let Some(used) = energy {
                    self.energies.insert(p, *used);
                }
            }
            out.push(answer.map(|(r, energy)| Evaluation {
                energy,
                ..Evaluation::recorded(r)
            }));
        }
        let todo: Vec<usize> = positions
            .iter()
            .zip(&out)
            .filter(|(_, o)| o.is_none())
            .map(|(&p, _)| p)
            .collect();
        if !todo.is_empty() {
            let fresh = self.inner.evaluate(&todo)?;
            self.measured += fresh.len();
            let mut fresh = todo.iter().zip(fresh);
            for slot in out.iter_mut().filter(|o| o.is_none()) {
                let (&p, e) = fresh.next().expect("one report per position");
                self.remember(p, &e);
                *slot = Some(e);
            }
        }
        Ok(out
            .into_iter()
            .map(|o| o.expect("every position answered"))
            .collect())
    }

    /// Tells the inner evaluator the positions neither this run nor the journal answers.
    fn prepare(&mut self, likely: &[usize]) {
        let metering = metering();
        let todo: Vec<usize> = likely
            .iter()
            .copied()
            .filter(|&p| self.lookup(p, metering.as_ref()).is_none())
            .collect();
        if !todo.is_empty() {
            self.inner.prepare(&todo);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuner::{Closure, ResultSource};
    use std::sync::Arc;
    use tunable_search::SpaceBuilder;

    #[test]
    fn known_results_are_not_measured_again_and_new_ones_are_journaled() {
        let space = Arc::new(SpaceBuilder::new().param("a", 0..6).build().unwrap());
        let dir = std::env::temp_dir().join(format!("tunable-journaled-{}", std::process::id()));
        let path = Journal::path_for(&dir, "k", 0, &space).unwrap();
        let mut j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        j.record(1, Ok(5.0)).unwrap();
        let mut calls = Vec::new();
        let mut e = Journaled::new(
            Some(j),
            Closure(|p: usize| {
                calls.push(p);
                if p == 2 {
                    Err("bad".into())
                } else {
                    Ok(p as f64)
                }
            }),
        );
        let r = e.evaluate(&[0, 1, 2]).unwrap();
        assert_eq!(
            r.iter().map(|e| e.source).collect::<Vec<_>>(),
            [
                ResultSource::Measured,
                ResultSource::Recorded,
                ResultSource::Measured
            ]
        );
        assert_eq!(r[1].result, Ok(5.0));
        let again = e.evaluate(&[2, 3]).unwrap();
        assert_eq!(again[0], Evaluation::recorded(Err("bad".into())));
        assert_eq!(e.measured(), 3);
        assert_eq!(e.result(1), Some(&Ok(5.0)));
        assert_eq!(e.result(5), None);
        drop(e);
        assert_eq!(calls, [0, 2, 3]);
        let j = Journal::open(&path, Arc::clone(&space), "k", "cpu").unwrap();
        assert_eq!(j.len(), 4);
        assert_eq!(j.lookup(2), Some(&Err("bad".to_owned())));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
