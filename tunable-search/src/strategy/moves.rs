//! # Moves
//!
//! The moves of the local strategies (local search and simulated annealing), constraint-aware as
//! in Willemsen et al., "Constraint-aware Optimization in Auto-Tuning" (Section IV-A): from a
//! configuration, a *move* changes one parameter, either to any other value (a Hamming move) or to
//! the nearest previous or next value that gives a valid configuration (an adjacent move); a
//! *diagonal* move changes two parameters at once, each by one value. Without constraint awareness
//! the moves range over the Cartesian product and may leave the space.

use crate::Space;
use crate::clock::Knob;

/// Which configurations are one move away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Neighbour {
    /// Any other value of one parameter (the paper's Hamming neighbours).
    Hamming,
    /// The previous or next value of one parameter; constraint-aware, the nearest previous or
    /// next value that gives a valid configuration (the paper's adjacent rule, per parameter).
    Adjacent,
    /// The Hamming moves, the adjacent ones tried first (local search; in simulated annealing
    /// the `hamming` option mixes the two kinds instead).
    Mixed,
    /// The adjacent moves, then the diagonal ones: two parameters at once, each to its previous
    /// or next value (one step exactly), where that gives a valid configuration. Clock and
    /// power-limit parameters ([`Knob::NAMES`]) take no part in a diagonal move: a clock scales
    /// every configuration alike, so a pair with it gains what its two steps gain apart. Local
    /// search tries the diagonal moves after the adjacent ones, so with first improvement only
    /// where no adjacent move is better: where two interacting parameters (a tile's two extents,
    /// a block size and the work per thread) must move together.
    Diagonal,
}

/// One move: parameter `param` takes value index `value` (and, for a diagonal move, the
/// parameter and value index in `also`), which gives `position`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Move {
    pub(super) param: u16,
    pub(super) value: u16,
    pub(super) also: Option<(u16, u16)>,
    pub(super) position: Option<usize>,
}

/// The moves from `indices` under `rule`, in parameter order, into `out` (cleared first).
/// Constraint-aware, only moves to valid configurations; otherwise every Cartesian move. One O(1)
/// position look-up per candidate: at most the total number of values of all parameters.
pub(super) fn moves(
    space: &Space,
    indices: &[u16],
    rule: Neighbour,
    constraint_aware: bool,
    out: &mut Vec<Move>,
) {
    out.clear();
    let mut cand = indices.to_vec();
    for (p, param) in space.params().iter().enumerate() {
        let n = param.values().len() as u16;
        let g = indices[p];
        let mut consider = |j: u16, cand: &mut Vec<u16>| {
            cand[p] = j;
            let position = space.position(cand);
            let take = position.is_some() || !constraint_aware;
            if take {
                out.push(Move {
                    param: p as u16,
                    value: j,
                    also: None,
                    position,
                });
            }
            take
        };
        match rule {
            Neighbour::Hamming | Neighbour::Mixed => {
                for j in (0..n).filter(|&j| j != g) {
                    consider(j, &mut cand);
                }
            }
            Neighbour::Adjacent | Neighbour::Diagonal => {
                for j in (0..g).rev() {
                    if consider(j, &mut cand) {
                        break;
                    }
                }
                for j in g + 1..n {
                    if consider(j, &mut cand) {
                        break;
                    }
                }
            }
        }
        cand[p] = g;
    }
    if rule == Neighbour::Diagonal {
        diagonal(space, indices, constraint_aware, out);
    }
}

/// The positions of the valid configurations one move away from `indices` under `rule`, the
/// moves local search makes (constraint-aware), in parameter order.
///
/// ```
/// use tunable_search::SpaceBuilder;
/// use tunable_search::strategy::{Neighbour, neighbours};
/// let s = SpaceBuilder::new().param("a", 0..3).param("b", 0..3).build().unwrap();
/// assert_eq!(neighbours(&s, &[1, 1], Neighbour::Adjacent).len(), 4);
/// assert_eq!(neighbours(&s, &[1, 1], Neighbour::Diagonal).len(), 8);
/// ```
pub fn neighbours(space: &Space, indices: &[u16], rule: Neighbour) -> Vec<usize> {
    let mut out = Vec::new();
    moves(space, indices, rule, true, &mut out);
    out.iter().filter_map(|m| m.position).collect()
}

/// Appends the diagonal moves from `indices`: every pair of parameters other than clocks, each
/// one value up or down.
fn diagonal(space: &Space, indices: &[u16], constraint_aware: bool, out: &mut Vec<Move>) {
    let params = space.params();
    let sizes: Vec<u16> = params.iter().map(|p| p.values().len() as u16).collect();
    let paired: Vec<usize> = (0..params.len())
        .filter(|&p| Knob::of_name(params[p].name()).is_none())
        .collect();
    let step = |p: usize, up: bool| {
        let g = indices[p];
        if up {
            (g + 1 < sizes[p]).then_some(g + 1)
        } else {
            g.checked_sub(1)
        }
    };
    let mut cand = indices.to_vec();
    for (i, &p) in paired.iter().enumerate() {
        for &q in &paired[i + 1..] {
            for (up_p, up_q) in [(false, false), (false, true), (true, false), (true, true)] {
                let (Some(a), Some(b)) = (step(p, up_p), step(q, up_q)) else {
                    continue;
                };
                cand[p] = a;
                cand[q] = b;
                let position = space.position(&cand);
                if position.is_some() || !constraint_aware {
                    out.push(Move {
                        param: p as u16,
                        value: a,
                        also: Some((q as u16, b)),
                        position,
                    });
                }
                cand[p] = indices[p];
                cand[q] = indices[q];
            }
        }
    }
}

/// Reorders `moves` from `indices` (stably) so that the adjacent ones come first: on each
/// parameter, the nearest value below and the nearest above among the moves.
pub(super) fn adjacent_first(indices: &[u16], moves: &mut [Move]) {
    let mut near = vec![(u16::MAX, u16::MAX); indices.len()];
    let dist = |m: &Move| {
        let g = indices[usize::from(m.param)];
        (m.value < g, m.value.abs_diff(g))
    };
    for m in moves.iter() {
        let (below, d) = dist(m);
        let n = &mut near[usize::from(m.param)];
        let side = if below { &mut n.0 } else { &mut n.1 };
        *side = (*side).min(d);
    }
    moves.sort_by_key(|m| {
        let (below, d) = dist(m);
        let n = near[usize::from(m.param)];
        d != if below { n.0 } else { n.1 }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::space::Neighbourhood;
    use crate::strategy::config::Config;

    #[test]
    fn moves_follow_their_rules() {
        let s = SpaceBuilder::new()
            .param("x", 0..12)
            .param("y", [1, 2, 4, 8, 16])
            .param("z", [0, 1, 2])
            .constraint("x * y <= 64 and (z == 0 or x % 2 == 0)")
            .build()
            .unwrap();
        let mut m = Vec::new();
        for pos in 0..s.len() {
            let g = s.indices(pos);
            moves(&s, &g, Neighbour::Hamming, true, &mut m);
            let mut got: Vec<usize> = m.iter().map(|m| m.position.unwrap()).collect();
            got.sort_unstable();
            assert_eq!(got, s.neighbours(&g, Neighbourhood::Hamming));
            for x in &m {
                assert_eq!(
                    x.position,
                    s.position(&Config::at(&s, pos).moved(*x).indices)
                );
            }
            // Adjacent: on each side of each parameter, the nearest value that is valid.
            moves(&s, &g, Neighbour::Adjacent, true, &mut m);
            for x in &m {
                let (p, v) = (usize::from(x.param), x.value);
                let between = if v < g[p] { v + 1..g[p] } else { g[p] + 1..v };
                for j in between {
                    let mut c = g.clone();
                    c[p] = j;
                    assert!(!s.contains(&c), "{g:?}: skipped a valid value");
                }
            }
            // Not constraint-aware: every value change of the Cartesian product.
            moves(&s, &g, Neighbour::Hamming, false, &mut m);
            assert_eq!(m.len(), 11 + 4 + 2);
            let outside = Config {
                indices: g.clone(),
                position: None,
            };
            assert!(
                m.iter()
                    .all(|x| x.position == s.position(&outside.moved(*x).indices))
            );
            // Mixed: the adjacent moves first.
            moves(&s, &g, Neighbour::Mixed, true, &mut m);
            let mut adj = Vec::new();
            moves(&s, &g, Neighbour::Adjacent, true, &mut adj);
            adjacent_first(&g, &mut m);
            let mut head: Vec<Move> = m[..adj.len()].to_vec();
            head.sort_by_key(|x| (x.param, x.value));
            assert_eq!(head, adj);
            // Diagonal: the adjacent moves, then two parameters one value each, where valid.
            moves(&s, &g, Neighbour::Diagonal, true, &mut m);
            assert_eq!(m[..adj.len()], adj[..]);
            let mut pairs = 0;
            for p in 0..3 {
                for q in p + 1..3 {
                    for (a, b) in [(-1, -1), (-1, 1), (1, -1), (1, 1)] {
                        let mut c: Vec<i32> = g.iter().map(|&i| i32::from(i)).collect();
                        c[p] += a;
                        c[q] += b;
                        let c: Option<Vec<u16>> =
                            c.iter().map(|&i| u16::try_from(i).ok()).collect();
                        pairs += usize::from(c.is_some_and(|c| s.contains(&c)));
                    }
                }
            }
            assert_eq!(m.len(), adj.len() + pairs, "{g:?}");
            for x in &m[adj.len()..] {
                let (q, w) = x.also.expect("a diagonal move");
                assert!(x.param < q);
                assert_eq!(x.value.abs_diff(g[usize::from(x.param)]), 1);
                assert_eq!(w.abs_diff(g[usize::from(q)]), 1);
                assert_eq!(
                    x.position,
                    s.position(&Config::at(&s, pos).moved(*x).indices)
                );
            }
        }
    }

    #[test]
    fn a_clock_takes_no_part_in_a_diagonal_move() {
        let s = SpaceBuilder::new()
            .param("x", 0..4)
            .param("nvml_gr_clock", [1200, 1500, 1800])
            .param("y", 0..4)
            .build()
            .unwrap();
        let mut m = Vec::new();
        moves(&s, &[1, 1, 1], Neighbour::Diagonal, true, &mut m);
        assert_eq!(m.iter().filter(|x| x.also.is_none()).count(), 6);
        let diagonal: Vec<(u16, u16)> = m
            .iter()
            .filter_map(|x| x.also.map(|(q, _)| (x.param, q)))
            .collect();
        assert_eq!(diagonal, vec![(0, 2); 4]);
    }
}
