//! # Hold: the clocks at their fastest level while a member searches the rest
//!
//! Raising a graphics or memory clock or a power limit makes no kernel slower: on a space with
//! such trade-off parameters (Kernel Tuner's `nvml_gr_clock`, `nvml_mem_clock` and
//! `nvml_pwr_limit`) the fastest configurations lie at their highest level. For time, [`Hold`]
//! therefore holds them there and lets one strategy (`member`, by default
//! [`DIAGONAL_ILS`]: the fastest tiles' one-step neighbours are fast too)
//! search the other parameters: a space as many times smaller as the held parameters have
//! levels. Where a kernel is throttled at the top level, a lower one can still be
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
//! better, and `auto` runs the same local search over every parameter.

use super::held::Held;
use crate::Space;
use crate::strategy::options::{at_least, declare_options};
use crate::strategy::spec::member_spec;
use crate::strategy::{
    DIAGONAL_ILS, Memo, Outcome, Strategy, StrategyError, StrategySpec, Trial, build,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

declare_options! {
    /// Options of [`Hold`]; see the [module docs](self).
    #[derive(Clone, Debug, PartialEq)]
    pub struct HoldOptions {
        /// The strategy over the other parameters (options in brackets).
        member: StrategySpec = DIAGONAL_ILS.parse().expect("valid default member"),
            "member" => |_: &HoldOptions, v: &str| member_spec(v);
        /// Results at the held level the best must have stood before it is measured one level
        /// lower (0: never).
        settle: usize = 6, "settle" => at_least(0);
    }
}

/// Holds the trade-off parameters at their highest level while a member searches the rest; see
/// the [module docs](self).
pub struct Hold {
    space: Arc<Space>,
    member: Box<dyn Strategy>,
    held: Option<Held>,
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
    /// For each lower level asked: the configuration one level up and the held parameter.
    above: HashMap<usize, (usize, usize)>,
    /// Positions the member asked that are not told yet (in the whole space).
    member_untold: HashSet<usize>,
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
        let held = Held::of(&space);
        let searched = held
            .as_ref()
            .map_or(Arc::clone(&space), |h| Arc::clone(&h.sub));
        let member = build(&opts.member, searched, seed)?;
        Ok(Hold {
            memo: Memo::new(space.len()),
            space,
            member,
            held,
            rng: ChaCha8Rng::seed_from_u64(seed),
            settle: opts.settle,
            best: None,
            stood: 0,
            lowered: HashSet::new(),
            queue: VecDeque::new(),
            above: HashMap::new(),
            member_untold: HashSet::new(),
        })
    }

    /// The held parameters' indices in the space (empty when nothing is held).
    pub fn held(&self) -> &[usize] {
        self.held.as_ref().map_or(&[], |h| &h.dims)
    }

    /// Configuration `p` with held parameter `d` at its next lower value, if there is one and
    /// it is valid.
    fn lower(&self, p: usize, d: usize) -> Option<usize> {
        let values = self.space.params()[d].values();
        let mut idx = self.space.indices(p);
        let here = values[usize::from(idx[d])].as_f64()?;
        let (next, _) = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_f64().filter(|&x| x < here).map(|x| (i, x)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        idx[d] = u16::try_from(next).ok()?;
        self.space.position(&idx)
    }

    /// Queues `p` one level lower on held parameter `d`, unless asked already.
    fn queue_lower(&mut self, p: usize, d: usize) {
        if let Some(q) = self.lower(p, d)
            && !self.memo.is_asked(q)
            && !self.above.contains_key(&q)
        {
            self.above.insert(q, (p, d));
            self.queue.push_back(q);
        }
    }

    /// Queues the best one level lower on every held parameter, once it has settled (`now`: the
    /// member has nothing left to ask, so it has).
    fn lower_settled_best(&mut self, now: bool) {
        let Some((b, _)) = self.best else { return };
        let settled = now || self.stood >= self.settle;
        if self.settle == 0 || !settled || !self.lowered.insert(b) {
            return;
        }
        for d in self.held().to_vec() {
            self.queue_lower(b, d);
        }
    }

    /// A result at a lower level: one level further down while each step is faster.
    fn follow(&mut self, t: &Trial) {
        let Some((up, d)) = self.above.remove(&t.position) else {
            return;
        };
        if let (Outcome::Value(v), Some(Outcome::Value(u))) = (t.outcome, self.memo.get(up))
            && v < u
        {
            self.queue_lower(t.position, d);
        }
    }
}

impl Strategy for Hold {
    fn ask(&mut self, n: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if let Some(q) = self.queue.pop_front() {
                if self.memo.mark_asked(q) {
                    out.push(q);
                }
                continue;
            }
            if let Some(&q) = self.member.ask(1).first() {
                let p = self.held.as_ref().map_or(q, |h| h.whole[q]);
                self.member_untold.insert(p);
                self.memo.mark_asked(p);
                out.push(p);
                continue;
            }
            // The member waits for results, or has asked its whole space.
            if !self.member_untold.is_empty() {
                break;
            }
            self.lower_settled_best(true);
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
            let at_level = match &self.held {
                Some(h) => h.part.get(&t.position).copied(),
                None => Some(t.position),
            };
            let Some(q) = at_level else {
                self.follow(t);
                continue;
            };
            self.member_untold.remove(&t.position);
            member.push(Trial {
                position: q,
                outcome: t.outcome,
            });
            match (t.outcome, self.best) {
                (Outcome::Value(v), best) if best.is_none_or(|(_, b)| v < b) => {
                    self.best = Some((t.position, v));
                    self.stood = 0;
                }
                _ => self.stood += 1,
            }
        }
        if !member.is_empty() {
            self.member.tell(&member);
        }
        self.lower_settled_best(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::strategy::{Minimized, build_for};

    #[test]
    fn auto_on_a_clock_space_is_the_diagonal_local_search_held_for_time_only() {
        let (space, time) = space_and_time();
        let auto: StrategySpec = "auto".parse().unwrap();
        let local: StrategySpec = DIAGONAL_ILS.parse().unwrap();
        let a = build_for(&auto, Arc::clone(&space), 4, Minimized::Other).unwrap();
        let b = build(&local, Arc::clone(&space), 4).unwrap();
        in_lockstep(a, b, &space, &time, 30);
        // For time the same local search runs with the clock held at its top level.
        let held: StrategySpec = format!("hold:member=[{}]", DIAGONAL_ILS).parse().unwrap();
        let t = build_for(&auto, Arc::clone(&space), 4, Minimized::Time).unwrap();
        let h = build(&held, Arc::clone(&space), 4).unwrap();
        let asked = in_lockstep(t, h, &space, &time, 30);
        for &p in &asked[..5] {
            assert_eq!(space.values(p)[1].as_f64(), Some(1600.0));
        }
    }

    /// Asks `a` and `b` one position at a time, `n` times or until they stop, asserting that
    /// they ask the same, and tells both `time` of it; the positions asked.
    fn in_lockstep(
        mut a: Box<dyn Strategy>,
        mut b: Box<dyn Strategy>,
        space: &Space,
        time: &dyn Fn(&Space, usize) -> f64,
        n: usize,
    ) -> Vec<usize> {
        let mut asked = Vec::new();
        for _ in 0..n {
            let (pa, pb) = (a.ask(1), b.ask(1));
            assert_eq!(pa, pb);
            let Some(&p) = pa.first() else { break };
            let told = [Trial {
                position: p,
                outcome: Outcome::Value(time(space, p)),
            }];
            a.tell(&told);
            b.tell(&told);
            asked.push(p);
        }
        asked
    }

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

    fn run(
        s: &mut Hold,
        space: &Space,
        time: &impl Fn(&Space, usize) -> f64,
        n: usize,
    ) -> Vec<usize> {
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
        let hold = Box::new(Hold::new(Arc::clone(&space), HoldOptions::default(), 5).unwrap());
        let member = build(&DIAGONAL_ILS.parse().unwrap(), Arc::clone(&space), 5).unwrap();
        assert_eq!(in_lockstep(hold, member, &space, &time, 30).len(), 30);
    }
}
