//! # Hold: the clocks at their fastest level while a member searches the rest
//!
//! Raising a graphics or memory clock or a power limit makes no kernel slower: on a space with
//! such trade-off parameters ([`Held`]) the fastest configurations lie at their highest level.
//! For time, [`Hold`] therefore holds them there and lets one strategy (`member`, by default the
//! one `auto` names) search the other parameters: a space as many times smaller as the held
//! parameters have levels. Where a kernel is throttled at the top level, a lower one can still be
//! faster: a best configuration that has stood for `settle` results at the held level is
//! measured one level lower on each held parameter, and further down that parameter while each
//! step is faster. Once the member has nothing left to ask, the rest of the space is drawn at
//! random, so every configuration can still be reached.
//!
//! Without trade-off parameters (or with nothing else to search) the member searches the whole
//! space with the same seed: `hold` is then its member, run for run.
//!
//! `auto` holds for time only ([`build_for`](super::build_for) with
//! [`Minimized::Time`](super::Minimized::Time)): for energy or power a lower level is often
//! better, and the member searches every parameter.

use super::held::Held;
use crate::Space;
use crate::strategy::options::{at_least, choice, declare_options};
use crate::strategy::{Memo, Outcome, Strategy, StrategyError, StrategySpec, Trial, build};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

declare_options! {
    /// Options of [`Hold`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct HoldOptions {
        /// The strategy over the other parameters (options in brackets).
        member: StrategySpec = "auto".parse().expect("valid default member"),
            "member" => member_spec;
        /// Results at the held level the best must have stood before it is measured one level
        /// lower (0: never).
        settle: usize = 6, "settle" => at_least(0);
        /// The held level: `top` (the highest of every held parameter, for time) or `probe` (the
        /// best level of a first random configuration, every level of it measured).
        level: Level = Level::Top, "level" => choice(&[("top", Level::Top), ("probe", Level::Probe)]);
    }
}

/// Where [`Hold`] holds the trade-off parameters (option `level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Their highest values: no kernel is slower there.
    Top,
    /// The level at which a first random configuration is best, of its first [`PROBE`] levels;
    /// a settled best is then walked both ways.
    Probe,
}

/// The most levels of the first configuration a probe measures.
pub const PROBE: usize = 12;

/// `member`: one spec, in brackets if it has options.
fn member_spec(_: &HoldOptions, value: &str) -> Result<StrategySpec, String> {
    let inner = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    inner.parse().map_err(|e: StrategyError| e.to_string())
}

/// Holds the trade-off parameters at their highest level while a member searches the rest; see
/// the [module docs](self).
pub struct Hold {
    space: Arc<Space>,
    /// The member, once the held level is known.
    member: Option<Box<dyn Strategy>>,
    spec: StrategySpec,
    seed: u64,
    level: Level,
    /// The trade-off parameters (empty: the member searches the whole space).
    dims: Vec<usize>,
    held: Option<Held>,
    /// While probing: the first configuration's levels left to ask, and those asked and untold.
    probe: VecDeque<usize>,
    probing: usize,
    /// The first configuration of a probe, once asked.
    origin: Option<usize>,
    memo: Memo,
    rng: ChaCha8Rng,
    settle: usize,
    /// The best value at the held level and the whole space's position it is of.
    best: Option<(usize, f64)>,
    /// Results at the held level told since the best last changed.
    stood: usize,
    /// Bests already measured lower.
    lowered: HashSet<usize>,
    /// Lower levels to ask next.
    queue: VecDeque<usize>,
    /// For each level asked by a walk: the configuration it stepped from, the held parameter
    /// and the direction (`true`: up).
    above: HashMap<usize, (usize, usize, bool)>,
    /// Positions the member asked that are not told yet.
    member_untold: usize,
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hold")
            .field("held", &self.held.as_ref().map(|h| &h.dims))
            .field("settle", &self.settle)
            .finish_non_exhaustive()
    }
}

impl Hold {
    /// The strategy over `space`, seeded; fails if the member cannot be built.
    pub fn new(space: Arc<Space>, opts: HoldOptions, seed: u64) -> Result<Self, StrategyError> {
        let dims = Held::dims(&space).unwrap_or_default();
        let held = match opts.level {
            Level::Top => Held::of(&space),
            Level::Probe => None,
        };
        let mut hold = Hold {
            memo: Memo::new(space.len()),
            member: None,
            spec: opts.member,
            seed,
            level: opts.level,
            dims,
            held,
            probe: VecDeque::new(),
            probing: 0,
            origin: None,
            space,
            rng: ChaCha8Rng::seed_from_u64(seed),
            settle: opts.settle,
            best: None,
            stood: 0,
            lowered: HashSet::new(),
            queue: VecDeque::new(),
            above: HashMap::new(),
            member_untold: 0,
        };
        if hold.held.is_none() && hold.level == Level::Probe && !hold.dims.is_empty() {
            // Built now only to check the spec; built again once the level is known.
            build(&hold.spec, Arc::clone(&hold.space), seed)?;
        } else {
            if hold.held.is_none() {
                hold.dims.clear();
            }
            hold.start_member()?;
        }
        Ok(hold)
    }

    /// Builds the member over the held part (the whole space when nothing is held) and tells it
    /// what is known there.
    fn start_member(&mut self) -> Result<(), StrategyError> {
        let searched = self
            .held
            .as_ref()
            .map_or(Arc::clone(&self.space), |h| Arc::clone(&h.sub));
        let mut member = build(&self.spec, searched, self.seed)?;
        let known: Vec<Trial> = (0..self.space.len())
            .filter_map(|p| {
                let outcome = self.memo.get(p)?;
                let q = self.held.as_ref().map_or(Some(p), |h| h.part.get(&p).copied())?;
                Some(Trial { position: q, outcome })
            })
            .collect();
        for t in &known {
            let p = self.held.as_ref().map_or(t.position, |h| h.whole[t.position]);
            self.note_best(p, t.outcome);
        }
        if !known.is_empty() {
            member.tell(&known);
        }
        self.member = Some(member);
        Ok(())
    }

    /// A result at the held level: the best and how long it has stood.
    fn note_best(&mut self, p: usize, outcome: Outcome) {
        match (outcome, self.best) {
            (Outcome::Value(v), best) if best.is_none_or(|(_, b)| v < b) => {
                self.best = Some((p, v));
                self.stood = 0;
            }
            _ => self.stood += 1,
        }
    }

    /// The probe's next position: a random first configuration, then its other levels.
    fn next_probe(&mut self) -> Option<usize> {
        if self.origin.is_none() {
            let p = self.memo.random_unasked(&mut self.rng)?;
            self.origin = Some(p);
            return Some(p);
        }
        self.probe.pop_front()
    }

    /// After a probe result: queue the first configuration's levels once it is valid (another
    /// first configuration if it failed), and hold at the best level once all are told.
    fn probed(&mut self, t: &Trial) {
        self.probing = self.probing.saturating_sub(1);
        if Some(t.position) == self.origin && self.probe.is_empty() {
            if t.outcome.value().is_none() {
                self.origin = None;
                return;
            }
            let idx = self.space.indices(t.position);
            let here: Vec<u16> = self.dims.iter().map(|&d| idx[d]).collect();
            let sizes: Vec<u16> = self
                .dims
                .iter()
                .map(|&d| self.space.params()[d].values().len() as u16)
                .collect();
            for level in super::held::spread_order(&sizes, &here).into_iter() {
                let mut other = idx.clone();
                for (&d, &l) in self.dims.iter().zip(&level) {
                    other[d] = l;
                }
                if let Some(q) = self.space.position(&other)
                    && !self.memo.is_asked(q)
                {
                    self.probe.push_back(q);
                }
                if self.probe.len() + 1 >= PROBE {
                    break;
                }
            }
        }
        if self.probe.is_empty() && self.probing == 0 && self.origin.is_some() {
            self.hold_at_best_probe();
        }
    }

    /// Holds at the level where the probed configuration is best.
    fn hold_at_best_probe(&mut self) {
        let Some(origin) = self.origin else { return };
        let idx = self.space.indices(origin);
        let mut best: Option<(f64, Vec<u16>)> = None;
        for p in 0..self.space.len() {
            let Some(Outcome::Value(v)) = self.memo.get(p) else {
                continue;
            };
            let other = self.space.indices(p);
            let same = (0..idx.len()).all(|d| self.dims.contains(&d) || idx[d] == other[d]);
            if same && best.as_ref().is_none_or(|(b, _)| v < *b) {
                best = Some((v, self.dims.iter().map(|&d| other[d]).collect()));
            }
        }
        let level = best.map(|(_, l)| l).unwrap_or_default();
        self.held = Held::at_level(&self.space, self.dims.clone(), &level);
        if self.held.is_none() {
            self.dims.clear();
        }
        self.start_member().expect("the spec was checked when the strategy was built");
    }

    /// The held parameters' indices in the space (empty when nothing is held).
    pub fn held(&self) -> &[usize] {
        &self.dims
    }

    /// Configuration `p` with held parameter `d` at its next value up or down, if there is one
    /// and it is valid.
    fn step(&self, p: usize, d: usize, up: bool) -> Option<usize> {
        let values = self.space.params()[d].values();
        let mut idx = self.space.indices(p);
        let here = values[usize::from(idx[d])].as_f64()?;
        let beyond = |x: f64| if up { x > here } else { x < here };
        let (next, _) = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_f64().filter(|&x| beyond(x)).map(|x| (i, x)))
            .min_by(|a, b| {
                let (a, b) = ((a.1 - here).abs(), (b.1 - here).abs());
                a.total_cmp(&b)
            })?;
        idx[d] = u16::try_from(next).ok()?;
        self.space.position(&idx)
    }

    /// Queues `p` one level up or down on held parameter `d`, unless asked already.
    fn queue_step(&mut self, p: usize, d: usize, up: bool) {
        if let Some(q) = self.step(p, d, up)
            && !self.memo.is_asked(q)
            && !self.above.contains_key(&q)
        {
            self.above.insert(q, (p, d, up));
            self.queue.push_back(q);
        }
    }

    /// Queues the best one level lower on every held parameter (and higher, when probed), once
    /// it has settled (`now`: the member has nothing left to ask, so it has).
    fn walk_settled_best(&mut self, now: bool) {
        let Some((b, _)) = self.best else { return };
        let settled = now || self.stood >= self.settle;
        if self.settle == 0 || !settled || !self.lowered.insert(b) {
            return;
        }
        for d in self.dims.clone() {
            self.queue_step(b, d, false);
            if self.level == Level::Probe {
                self.queue_step(b, d, true);
            }
        }
    }

    /// A result of a walk: one level further the same way while each step is better.
    fn follow(&mut self, t: &Trial) {
        let Some((from, d, up)) = self.above.remove(&t.position) else {
            return;
        };
        if let (Outcome::Value(v), Some(Outcome::Value(u))) = (t.outcome, self.memo.get(from))
            && v < u
        {
            self.queue_step(t.position, d, up);
        }
    }
}

impl Strategy for Hold {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if self.member.is_none() {
                // Probing: one first configuration, then its levels once it is told valid.
                let waiting = self.origin.is_some() && self.probe.is_empty();
                match (!waiting).then(|| self.next_probe()).flatten() {
                    Some(p) => {
                        self.memo.mark_asked(p);
                        self.probing += 1;
                        out.push(p);
                        continue;
                    }
                    None => break,
                }
            }
            if let Some(q) = self.queue.pop_front() {
                if self.memo.mark_asked(q) {
                    out.push(q);
                }
                continue;
            }
            let member = self.member.as_mut().expect("probing is over");
            if let Some(&q) = member.ask(1).first() {
                let p = self.held.as_ref().map_or(q, |h| h.whole[q]);
                self.member_untold += 1;
                self.memo.mark_asked(p);
                out.push(p);
                continue;
            }
            // The member waits for results, or has asked its whole space.
            if self.member_untold > 0 {
                break;
            }
            self.walk_settled_best(true);
            if !self.queue.is_empty() {
                continue;
            }
            let Some(p) = self.memo.random_unasked(&mut self.rng) else {
                break;
            };
            self.memo.mark_asked(p);
            out.push(p);
        }
        out
    }

    fn tell(&mut self, trials: &[Trial]) {
        let mut member = Vec::new();
        for t in trials {
            self.memo.mark_asked(t.position);
            self.memo.record(t);
            if self.member.is_none() {
                self.probed(t);
                continue;
            }
            let at_level = match &self.held {
                Some(h) => h.part.get(&t.position).copied(),
                None => Some(t.position),
            };
            let Some(q) = at_level else {
                self.follow(t);
                continue;
            };
            self.member_untold = self.member_untold.saturating_sub(1);
            member.push(Trial {
                position: q,
                outcome: t.outcome,
            });
            self.note_best(t.position, t.outcome);
        }
        if let Some(m) = self.member.as_mut()
            && !member.is_empty()
        {
            m.tell(&member);
        }
        self.walk_settled_best(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;

    /// Tiles 1-8 at clocks 1000-1600 MHz: time = (tile - 5)² + 10, divided by the clock, except
    /// tile 5, throttled at the top clock: still the fastest tile there, and faster at 1500.
    fn space_and_time() -> (Arc<Space>, impl Fn(&Space, usize) -> f64) {
        let space = SpaceBuilder::new()
            .param("tile", 1..=8)
            .param("nvml_gr_clock", [1000, 1200, 1400, 1500, 1600])
            .build()
            .unwrap();
        let time = |s: &Space, p: usize| {
            let v = s.values(p);
            let tile = v[0].as_f64().unwrap();
            let clock = v[1].as_f64().unwrap();
            let t = ((tile - 5.0).powi(2) + 10.0) * 1000.0 / clock;
            if tile == 5.0 && clock == 1600.0 {
                t * 1.08
            } else {
                t
            }
        };
        (Arc::new(space), time)
    }

    fn run(s: &mut Hold, space: &Space, time: &impl Fn(&Space, usize) -> f64, n: usize) -> Vec<usize> {
        let mut asked = Vec::new();
        while asked.len() < n {
            let got = s.ask(1);
            let Some(&p) = got.first() else { break };
            s.tell(&[Trial {
                position: p,
                outcome: Outcome::Value(time(space, p)),
            }]);
            asked.push(p);
        }
        asked
    }

    #[test]
    fn the_member_searches_the_top_level_and_a_settled_best_is_followed_down() {
        let (space, time) = space_and_time();
        let opts = "hold:member=exhaustive:settle=2"
            .parse::<StrategySpec>()
            .unwrap()
            .apply(HoldOptions::default())
            .unwrap();
        let mut s = Hold::new(Arc::clone(&space), opts, 3).unwrap();
        assert_eq!(s.held(), [1]);
        let asked = run(&mut s, &space, &time, 10);
        let clocks: Vec<f64> = asked
            .iter()
            .map(|&p| space.values(p)[1].as_f64().unwrap())
            .collect();
        // The eight tiles at 1600 MHz, and the lowering of the settled best.
        assert_eq!(clocks.iter().filter(|&&c| c == 1600.0).count(), 8);
        // Tile 5, throttled at the top, is followed down to 1500 (faster) and 1400 (slower).
        let tile5: Vec<f64> = asked
            .iter()
            .filter(|&&p| space.values(p)[0].as_f64() == Some(5.0))
            .map(|&p| space.values(p)[1].as_f64().unwrap())
            .collect();
        assert_eq!(tile5, [1600.0, 1500.0, 1400.0], "{clocks:?}");
        let best = asked
            .iter()
            .min_by(|&&a, &&b| time(&space, a).total_cmp(&time(&space, b)))
            .unwrap();
        assert_eq!(space.values(*best)[0].as_f64(), Some(5.0));
        assert_eq!(space.values(*best)[1].as_f64(), Some(1500.0));
    }

    #[test]
    fn a_probe_holds_where_the_first_configuration_is_best_and_walks_both_ways() {
        // Energy: tile 3 is best; every tile is most efficient at 1400 MHz, tile 3 at 1200.
        let space = Arc::new(
            SpaceBuilder::new()
                .param("tile", 1..=8)
                .param("nvml_gr_clock", [1000, 1200, 1400, 1500, 1600])
                .build()
                .unwrap(),
        );
        let energy = |s: &Space, p: usize| {
            let v = s.values(p);
            let tile = v[0].as_f64().unwrap();
            let clock = v[1].as_f64().unwrap();
            let (sweet, weight) = if tile == 3.0 { (1200.0, 0.5) } else { (1400.0, 1.0) };
            (tile - 3.0).abs() + 5.0 + weight * ((clock - sweet) / 200.0).powi(2)
        };
        let opts = "hold:member=exhaustive:settle=2:level=probe"
            .parse::<StrategySpec>()
            .unwrap()
            .apply(HoldOptions::default())
            .unwrap();
        let mut s = Hold::new(Arc::clone(&space), opts, 4).unwrap();
        let asked = run(&mut s, &space, &energy, 16);
        let clock = |p: usize| space.values(p)[1].as_f64().unwrap();
        // The first configuration at its five levels, then the other tiles at 1400 MHz (the
        // first one's best), in between the walk from the settled best down to 1200.
        let first = space.values(asked[0])[0].as_f64();
        assert!(asked[..5].iter().all(|&p| space.values(p)[0].as_f64() == first));
        let at_1400 = asked[5..].iter().filter(|&&p| clock(p) == 1400.0).count();
        assert!(at_1400 >= 7 - usize::from(first != Some(3.0)), "{asked:?}");
        let best = asked
            .iter()
            .min_by(|&&a, &&b| energy(&space, a).total_cmp(&energy(&space, b)))
            .unwrap();
        assert_eq!(space.values(*best)[0].as_f64(), Some(3.0));
        assert_eq!(clock(*best), 1200.0, "{asked:?}");
    }

    #[test]
    fn every_configuration_is_asked_once() {
        let (space, time) = space_and_time();
        let mut s = Hold::new(Arc::clone(&space), HoldOptions::default(), 1).unwrap();
        let mut asked = run(&mut s, &space, &time, 100);
        assert_eq!(asked.len(), space.len());
        asked.sort_unstable();
        asked.dedup();
        assert_eq!(asked.len(), space.len());
    }

    #[test]
    fn without_a_clock_it_is_its_member() {
        let space = Arc::new(
            SpaceBuilder::new()
                .param("a", 0..12)
                .param("b", 0..12)
                .build()
                .unwrap(),
        );
        let time = |s: &Space, p: usize| {
            let v = s.values(p);
            (v[0].as_f64().unwrap() - 7.0).abs() + (v[1].as_f64().unwrap() - 3.0).powi(2)
        };
        let mut hold = Hold::new(Arc::clone(&space), HoldOptions::default(), 5).unwrap();
        let mut member = build(&"auto".parse().unwrap(), Arc::clone(&space), 5).unwrap();
        for _ in 0..30 {
            let (a, b) = (hold.ask(1), member.ask(1));
            assert_eq!(a, b);
            let t = [Trial {
                position: a[0],
                outcome: Outcome::Value(time(&space, a[0])),
            }];
            hold.tell(&t);
            member.tell(&t);
        }
    }
}
