//! # Construction by constraint solving
//!
//! Builds the set of valid configurations without walking the Cartesian product:
//!
//! 1. **Independent groups.** Parameters linked by no conjunct are solved separately; the valid
//!    set is the product of the groups' solutions (parameters with one value are constants and
//!    were folded away by the compiler).
//! 2. **Variable order.** Each conjunct's pass rate is estimated (exhaustively over its
//!    parameters' values when that is small, by a fixed-seed sample otherwise). Under an
//!    independence assumption the number of partial assignments that survive after assigning a
//!    set `S` of parameters is `N(S) = prod |D_v| * prod sel_c` over the conjuncts inside `S`,
//!    and assigning `v` after `S` costs `N(S) * |D_v|` evaluations; a dynamic program over
//!    subsets finds the order with the least total cost (greedy beyond 16 parameters).
//! 3. **Staged evaluation.** Every node of the compiled program is evaluated once, at the depth
//!    where its last parameter is assigned, so loop-invariant subexpressions are not recomputed
//!    in inner loops, and every conjunct is checked as soon as its parameters are assigned.
//! 4. **Parallel enumeration.** Large groups split the values of their first parameter across
//!    threads.
//!
//! The result is the sorted list of configuration keys (see [`super::layout`]).

use super::layout::Layout;
use crate::expr::program::{Op, Program, V};
use crate::mix::{GOLDEN, mix64};
use std::collections::BTreeMap;

/// Estimated prefix count above which a group is enumerated on several threads.
const PARALLEL_WORK: f64 = 2e5;
/// Largest group ordered by the exact subset dynamic program.
const DP_MAX_VARS: usize = 16;

/// Returns the sorted keys of all valid configurations.
pub(crate) fn solve(prog: &Program, layout: &Layout, threads: usize) -> Vec<u64> {
    let d = prog.param_values.len();
    let mut scratch = Vec::new();
    // Conjuncts over constants only: decided once.
    for c in prog.conjuncts.iter().filter(|c| c.params.is_empty()) {
        if !prog.eval_root(c.root, &[], &mut scratch).truthy() {
            return Vec::new();
        }
    }
    // Union-find over the parameters, linked by conjuncts.
    let mut parent: Vec<usize> = (0..d).collect();
    fn find(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        parent[x] = r;
        r
    }
    for c in &prog.conjuncts {
        for w in c.params.windows(2) {
            let (a, b) = (
                find(&mut parent, w[0] as usize),
                find(&mut parent, w[1] as usize),
            );
            parent[a] = b;
        }
    }
    let mut groups: BTreeMap<usize, Group> = BTreeMap::new();
    for p in 0..d {
        if prog.param_values[p].len() > 1 {
            let r = find(&mut parent, p);
            groups.entry(r).or_default().vars.push(p as u16);
        }
    }
    for (ci, c) in prog.conjuncts.iter().enumerate() {
        if let Some(&p) = c.params.first() {
            let r = find(&mut parent, p as usize);
            groups.entry(r).or_default().conjuncts.push(ci);
        }
    }
    // Solve each group into partial keys; the full keys are all sums across groups.
    let mut keys: Vec<u64> = vec![0];
    for g in groups.values() {
        let part = if g.conjuncts.is_empty() {
            let p = g.vars[0] as usize;
            (0..prog.param_values[p].len() as u64)
                .map(|i| i << layout.shifts[p])
                .collect()
        } else {
            solve_group(prog, layout, g, threads)
        };
        if part.is_empty() {
            return Vec::new();
        }
        let mut next = Vec::with_capacity(keys.len() * part.len());
        for &a in &keys {
            next.extend(part.iter().map(|&b| a | b));
        }
        keys = next;
    }
    keys.sort_unstable();
    keys
}

#[derive(Default)]
struct Group {
    vars: Vec<u16>,
    conjuncts: Vec<usize>,
}

/// The evaluation schedule of a group for a given variable order.
struct Plan<'a> {
    prog: &'a Program,
    order: Vec<u16>,
    /// For each depth: the slot of the parameter's node, if any node reads it.
    param_node: Vec<Option<usize>>,
    /// For each depth: nodes to evaluate once the parameter at that depth is set.
    stage_nodes: Vec<Vec<usize>>,
    /// For each depth: conjunct roots to check at that depth.
    checks: Vec<Vec<usize>>,
    /// Initial slot values (constants filled in).
    slots: Vec<V>,
    shifts: Vec<u32>,
}

fn solve_group(prog: &Program, layout: &Layout, g: &Group, threads: usize) -> Vec<u64> {
    let (order, work) = choose_order(prog, g);
    let k = order.len();
    let n = prog.nodes.len();
    let mut pos = vec![usize::MAX; prog.param_values.len()];
    for (i, &p) in order.iter().enumerate() {
        pos[p as usize] = i;
    }
    // Nodes the group's conjuncts need.
    let mut needed = vec![false; n];
    for &ci in &g.conjuncts {
        needed[prog.conjuncts[ci].root as usize] = true;
    }
    for id in (0..n).rev() {
        if needed[id] {
            for o in prog.operands(id) {
                needed[o as usize] = true;
            }
        }
    }
    let mut plan = Plan {
        prog,
        order: order.clone(),
        param_node: vec![None; k],
        stage_nodes: vec![Vec::new(); k],
        checks: vec![Vec::new(); k],
        slots: prog
            .nodes
            .iter()
            .map(|op| if let Op::Const(v) = op { *v } else { V::Err })
            .collect(),
        shifts: order.iter().map(|&p| layout.shifts[p as usize]).collect(),
    };
    for id in (0..n).filter(|&id| needed[id]) {
        let Some(stage) = prog.deps[id].iter().map(|&p| pos[p as usize]).max() else {
            continue;
        };
        match prog.nodes[id] {
            Op::Param(_) => plan.param_node[stage] = Some(id),
            Op::Const(_) => {}
            _ => plan.stage_nodes[stage].push(id),
        }
    }
    for &ci in &g.conjuncts {
        let c = &prog.conjuncts[ci];
        let stage = c.params.iter().map(|&p| pos[p as usize]).max().unwrap_or(0);
        plan.checks[stage].push(c.root as usize);
    }
    let first_count = prog.param_values[order[0] as usize].len();
    if threads <= 1 || work < PARALLEL_WORK || first_count < 2 {
        let all: Vec<usize> = (0..first_count).collect();
        return plan.enumerate(&all);
    }
    let threads = threads.min(first_count);
    std::thread::scope(|s| {
        let plan = &plan;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                // Interleave the first parameter's values for balance.
                let mine: Vec<usize> = (t..first_count).step_by(threads).collect();
                s.spawn(move || plan.enumerate(&mine))
            })
            .collect();
        let mut out = Vec::new();
        for h in handles {
            out.extend(h.join().expect("enumeration thread panicked"));
        }
        out
    })
}

impl Plan<'_> {
    /// Depth-first enumeration, with the first parameter restricted to `first`.
    fn enumerate(&self, first: &[usize]) -> Vec<u64> {
        let prog = self.prog;
        let k = self.order.len();
        let counts: Vec<usize> = self
            .order
            .iter()
            .map(|&p| prog.param_values[p as usize].len())
            .collect();
        let mut slots = self.slots.clone();
        let mut idx = vec![0usize; k];
        let mut prefix = vec![0u64; k + 1];
        let mut out = Vec::new();
        let mut fi = 0; // position in `first`
        let mut depth = 0;
        loop {
            if depth == 0 {
                if fi >= first.len() {
                    break;
                }
                idx[0] = first[fi];
                fi += 1;
            } else if idx[depth] >= counts[depth] {
                depth -= 1;
                if depth > 0 {
                    idx[depth] += 1;
                }
                continue;
            }
            let i = idx[depth];
            let p = self.order[depth] as usize;
            if let Some(slot) = self.param_node[depth] {
                slots[slot] = prog.param_values[p][i];
            }
            for &id in &self.stage_nodes[depth] {
                slots[id] = prog.eval(id, &slots);
            }
            if self.checks[depth].iter().all(|&r| slots[r].truthy()) {
                let key = prefix[depth] | ((i as u64) << self.shifts[depth]);
                if depth + 1 == k {
                    out.push(key);
                } else {
                    prefix[depth + 1] = key;
                    depth += 1;
                    idx[depth] = 0;
                    continue;
                }
            }
            if depth > 0 {
                idx[depth] += 1;
            }
        }
        out
    }
}

/// Picks the variable order of a group; also returns the estimated number of partial
/// assignments it visits.
fn choose_order(prog: &Program, g: &Group) -> (Vec<u16>, f64) {
    let m = g.vars.len();
    let local = |p: u16| {
        g.vars
            .iter()
            .position(|&v| v == p)
            .expect("conjunct parameter in its group")
    };
    let ln_size: Vec<f64> = g
        .vars
        .iter()
        .map(|&p| (prog.param_values[p as usize].len() as f64).ln())
        .collect();
    // (member variables, ln pass rate) per conjunct.
    let cons: Vec<(Vec<usize>, f64)> = g
        .conjuncts
        .iter()
        .map(|&ci| {
            let c = &prog.conjuncts[ci];
            (
                c.params.iter().map(|&p| local(p)).collect(),
                selectivity(prog, ci).ln(),
            )
        })
        .collect();
    if m <= DP_MAX_VARS {
        let full = 1usize << m;
        let mask = |vs: &[usize]| vs.iter().fold(0usize, |a, &v| a | (1 << v));
        let by_var: Vec<Vec<(usize, f64)>> = (0..m)
            .map(|v| {
                cons.iter()
                    .filter(|(vs, _)| vs.contains(&v))
                    .map(|(vs, s)| (mask(vs), *s))
                    .collect()
            })
            .collect();
        let mut ln_n = vec![0.0f64; full];
        let mut cost = vec![0.0f64; full];
        let mut choice = vec![0u8; full];
        for s in 1..full {
            let v = s.trailing_zeros() as usize;
            let rest = s & !(1 << v);
            ln_n[s] = ln_n[rest]
                + ln_size[v]
                + by_var[v]
                    .iter()
                    .filter(|(cm, _)| cm & s == *cm)
                    .map(|(_, l)| l)
                    .sum::<f64>();
            // Assigning `u` last costs one evaluation per surviving prefix and value of `u`.
            let (mut best, mut arg) = (f64::INFINITY, 0);
            let mut bits = s;
            while bits != 0 {
                let u = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let prev = s & !(1 << u);
                let c = cost[prev] + (ln_n[prev] + ln_size[u]).exp();
                if c < best {
                    best = c;
                    arg = u;
                }
            }
            cost[s] = best;
            choice[s] = arg as u8;
        }
        let mut order = Vec::with_capacity(m);
        let mut s = full - 1;
        while s != 0 {
            let u = choice[s] as usize;
            order.push(g.vars[u]);
            s &= !(1 << u);
        }
        order.reverse();
        return (order, cost[full - 1]);
    }
    // Greedy: add the variable that keeps the next prefix count smallest.
    let mut chosen = vec![false; m];
    let mut order = Vec::with_capacity(m);
    let (mut ln_cur, mut total) = (0.0f64, 0.0f64);
    for _ in 0..m {
        let mut best = (f64::INFINITY, 0);
        for v in (0..m).filter(|&v| !chosen[v]) {
            let gain: f64 = cons
                .iter()
                .filter(|(vs, _)| vs.contains(&v) && vs.iter().all(|&u| u == v || chosen[u]))
                .map(|(_, l)| l)
                .sum();
            let ln_next = ln_cur + ln_size[v] + gain;
            if ln_next < best.0 {
                best = (ln_next, v);
            }
        }
        chosen[best.1] = true;
        order.push(g.vars[best.1]);
        total += (ln_cur + ln_size[best.1]).exp();
        ln_cur = best.0;
    }
    (order, total)
}

/// Estimated fraction of assignments of conjunct `ci`'s parameters that satisfy it.
fn selectivity(prog: &Program, ci: usize) -> f64 {
    const EXHAUSTIVE: usize = 1024;
    const SAMPLES: usize = 512;
    let c = &prog.conjuncts[ci];
    let total = prog.assignments(c);
    let mut scratch = Vec::new();
    let mut assign: Vec<(u16, u16)> = vec![(0, 0); c.params.len()];
    let mut state = GOLDEN ^ ci as u64;
    let n = total.min(if total <= EXHAUSTIVE {
        EXHAUSTIVE
    } else {
        SAMPLES
    });
    let mut pass = 0usize;
    for t in 0..n {
        let pick = if total <= EXHAUSTIVE {
            t
        } else {
            // SplitMix64: a fixed-seed stream, so construction is deterministic.
            state = state.wrapping_add(GOLDEN);
            (mix64(state) % total as u64) as usize
        };
        prog.assignment(c, pick, &mut assign);
        pass += usize::from(prog.eval_root(c.root, &assign, &mut scratch).truthy());
    }
    (pass as f64 + 0.5) / (n as f64 + 1.0)
}
