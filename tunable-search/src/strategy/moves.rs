//! # Moves
//!
//! The one-parameter moves of the local strategies (local search and simulated annealing),
//! constraint-aware as in Willemsen et al., "Constraint-aware Optimization in Auto-Tuning"
//! (Section IV-A): from a configuration, a *move* changes one
//! parameter, either to any other value (a Hamming move) or to the nearest previous or next value
//! that gives a valid configuration (an adjacent move). Without constraint awareness the moves
//! range over the Cartesian product and may leave the space.

use crate::Space;

/// Which configurations are one move away (always exactly one parameter changes).
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
}

/// One move: parameter `param` takes value index `value`, which gives `position`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Move {
    pub(super) param: u16,
    pub(super) value: u16,
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
            Neighbour::Adjacent => {
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
        }
    }
}
