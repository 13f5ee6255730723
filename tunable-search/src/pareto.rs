//! # Pareto fronts and their hypervolume
//!
//! Several objectives at once (time and energy, say) have no single best configuration but a
//! *front*: the configurations no other one *dominates* (as good in every objective and better
//! in one). Every objective here is minimized; one that is maximized (GFLOPS/W) is negated first
//! ([`Sense::key`]).
//!
//! How good a found front is: its *hypervolume*, the area (two objectives) between the front and
//! a *reference point* that every point of interest dominates. The bench scores a run by the
//! hypervolume of the front of what it has evaluated so far as a fraction of the true front's
//! (every configuration's), against one reference point for both: [`reference()`], the worst value
//! of each objective on the true front plus a tenth of the front's range in it, a rule that does
//! not depend on the objectives' units or signs.
//!
//! ```
//! use tunable_search::pareto::{front, hypervolume, reference};
//!
//! let points = [[1.0, 4.0], [2.0, 2.0], [3.0, 3.0], [4.0, 1.0]];
//! assert_eq!(front(&points), vec![0, 1, 3]);
//! let r = reference(&points).unwrap();
//! assert_eq!(r, [4.3, 4.3]);
//! let all = hypervolume(&points, r);
//! assert!(hypervolume(&points[..2], r) < all);
//! ```

/// Whether an objective is minimized or maximized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sense {
    /// Lower is better (time, energy).
    #[default]
    Minimize,
    /// Higher is better (GFLOPS/W).
    Maximize,
}

impl Sense {
    /// The value as a minimized objective: itself, or negated for [`Sense::Maximize`].
    pub fn key(self, value: f64) -> f64 {
        match self {
            Sense::Minimize => value,
            Sense::Maximize => -value,
        }
    }
}

/// Whether `a` dominates `b` (both minimized): no worse in every objective, better in one.
///
/// ```
/// use tunable_search::pareto::dominates;
/// assert!(dominates(&[1.0, 2.0], &[1.0, 3.0]));
/// assert!(!dominates(&[1.0, 2.0], &[1.0, 2.0]));
/// assert!(!dominates(&[1.0, 3.0], &[2.0, 2.0]));
/// ```
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y)
}

/// The positions in `points` of the front: the points no other point dominates, in order of
/// the first objective (then the second); of equal points, the first. Points with a non-finite
/// value are left out.
pub fn front(points: &[[f64; 2]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].iter().all(|v| v.is_finite()))
        .collect();
    order.sort_by(|&a, &b| {
        points[a][0]
            .total_cmp(&points[b][0])
            .then(points[a][1].total_cmp(&points[b][1]))
            .then(a.cmp(&b))
    });
    let mut out = Vec::new();
    let mut best = f64::INFINITY;
    for i in order {
        // Sorted by the first objective: a point is on the front if its second beats every
        // earlier one's.
        if points[i][1] < best {
            best = points[i][1];
            out.push(i);
        }
    }
    out
}

/// The area dominated by `points` (both objectives minimized) and bounded by `reference`:
/// exact, by a sweep over the front. Points not strictly better than the reference in both
/// objectives add nothing.
pub fn hypervolume(points: &[[f64; 2]], reference: [f64; 2]) -> f64 {
    let inside: Vec<[f64; 2]> = points
        .iter()
        .filter(|p| p[0] < reference[0] && p[1] < reference[1])
        .copied()
        .collect();
    let mut area = 0.0;
    let mut ceiling = reference[1];
    for i in front(&inside) {
        let [x, y] = inside[i];
        area += (reference[0] - x) * (ceiling - y);
        ceiling = y;
    }
    area
}

/// The reference point of [`hypervolume`] for a space whose valid points are `points`: per
/// objective, the worst value *on the true front* (the nadir) plus a tenth of the front's range
/// in it (nadir minus best; a tenth of the nadir's magnitude, or 1, if the front has one value).
/// A reference at the worst value of the whole space would make the trade-off a sliver of the
/// area: on a heavy-tailed space almost any point dominates almost all of it. `None` if no point
/// is finite.
pub fn reference(points: &[[f64; 2]]) -> Option<[f64; 2]> {
    let on: Vec<[f64; 2]> = front(points).into_iter().map(|i| points[i]).collect();
    if on.is_empty() {
        return None;
    }
    let mut out = [0.0; 2];
    for (k, slot) in out.iter_mut().enumerate() {
        let nadir = on.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
        let ideal = on.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
        let range = nadir - ideal;
        let margin = if range > 0.0 {
            0.1 * range
        } else if nadir != 0.0 {
            0.1 * nadir.abs()
        } else {
            1.0
        };
        *slot = nadir + margin;
    }
    Some(out)
}

/// The non-dominated rank of every point (any number of objectives, all minimized): 0 for the
/// points nothing dominates, 1 for those only rank-0 points dominate, and so on (the sorting of
/// Deb et al., "A fast and elitist multiobjective genetic algorithm: NSGA-II").
///
/// ```
/// use tunable_search::pareto::ranks;
/// let points: [&[f64]; 4] = [&[1.0, 4.0], &[2.0, 2.0], &[3.0, 3.0], &[4.0, 4.0]];
/// assert_eq!(ranks(&points), vec![0, 0, 1, 2]);
/// ```
pub fn ranks(points: &[&[f64]]) -> Vec<usize> {
    let n = points.len();
    let mut beaten_by = vec![0usize; n];
    let mut beats: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in i + 1..n {
            if dominates(points[i], points[j]) {
                beats[i].push(j);
                beaten_by[j] += 1;
            } else if dominates(points[j], points[i]) {
                beats[j].push(i);
                beaten_by[i] += 1;
            }
        }
    }
    let mut rank = vec![0usize; n];
    let mut layer: Vec<usize> = (0..n).filter(|&i| beaten_by[i] == 0).collect();
    let mut r = 0;
    while !layer.is_empty() {
        let mut next = Vec::new();
        for &i in &layer {
            rank[i] = r;
            for &j in &beats[i] {
                beaten_by[j] -= 1;
                if beaten_by[j] == 0 {
                    next.push(j);
                }
            }
        }
        layer = next;
        r += 1;
    }
    rank
}

/// The crowding distance of each of `points` within its own set (NSGA-II's): per objective, the
/// gap between a point's two neighbours in that objective divided by the set's range, summed;
/// the extremes of each objective are infinitely far. Larger means lonelier.
pub fn crowding(points: &[&[f64]]) -> Vec<f64> {
    let n = points.len();
    let mut out = vec![0.0; n];
    let Some(k) = points.first().map(|p| p.len()) else {
        return out;
    };
    (0..k).for_each(|m| {
        let at = |i: usize| points[i][m];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| at(a).total_cmp(&at(b)));
        let (lo, hi) = (at(order[0]), at(order[n - 1]));
        out[order[0]] = f64::INFINITY;
        out[order[n - 1]] = f64::INFINITY;
        if hi > lo {
            for w in order.windows(3) {
                out[w[1]] += (at(w[2]) - at(w[0])) / (hi - lo);
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominance_is_strict_somewhere() {
        assert!(dominates(&[1.0, 1.0], &[2.0, 2.0]));
        assert!(dominates(&[1.0, 2.0], &[2.0, 2.0]));
        assert!(!dominates(&[2.0, 2.0], &[1.0, 2.0]));
        assert!(!dominates(&[1.0, 3.0], &[3.0, 1.0]));
        assert!(!dominates(&[3.0, 1.0], &[1.0, 3.0]));
    }

    #[test]
    fn the_front_keeps_what_nothing_dominates() {
        let points = [
            [3.0, 3.0],
            [1.0, 5.0],
            [2.0, 2.0],
            [2.0, 4.0],
            [5.0, 1.0],
            [2.0, 2.0],
            [f64::NAN, 0.0],
            [4.0, 1.0],
        ];
        // (2, 2) twice: the first; (5, 1) is dominated by (4, 1); NaN is left out.
        assert_eq!(front(&points), vec![1, 2, 7]);
        assert!(front(&[]).is_empty());
    }

    #[test]
    fn hypervolume_by_hand() {
        let r = [5.0, 5.0];
        // One point: a rectangle.
        assert_eq!(hypervolume(&[[1.0, 2.0]], r), 4.0 * 3.0);
        // A staircase: (1, 4), (2, 2), (4, 1) against (5, 5):
        // 4 * 1 + 3 * 2 + 1 * 1 = 11.
        let stairs = [[1.0, 4.0], [2.0, 2.0], [4.0, 1.0]];
        assert_eq!(hypervolume(&stairs, r), 11.0);
        // Dominated points and points beyond the reference add nothing.
        let more = [
            [1.0, 4.0],
            [2.0, 2.0],
            [4.0, 1.0],
            [3.0, 3.0],
            [6.0, 0.5],
            [0.5, 5.0],
        ];
        assert_eq!(hypervolume(&more, r), 11.0);
        assert_eq!(hypervolume(&[], r), 0.0);
    }

    #[test]
    fn the_reference_adds_a_tenth_of_the_fronts_range() {
        // The front is (1, 3) and (2, 1); (5, 5) is dominated and does not move it.
        assert_eq!(
            reference(&[[1.0, 3.0], [2.0, 1.0], [5.0, 5.0]]),
            Some([2.1, 3.2])
        );
        // One point on the front: a tenth of its magnitude, or 1 at zero.
        let points = [[1.0, 10.0], [3.0, 20.0], [f64::INFINITY, 0.0]];
        assert_eq!(reference(&points), Some([1.1, 11.0]));
        assert_eq!(reference(&[[2.0, 0.0]]), Some([2.2, 1.0]));
        assert_eq!(reference(&[]), None);
    }

    #[test]
    fn a_maximized_objective_is_negated() {
        // Time (min) and GFLOPS/W (max): (1 ms, 10) dominates (2 ms, 5).
        let flip = |t: f64, g: f64| [Sense::Minimize.key(t), Sense::Maximize.key(g)];
        let points = [flip(1.0, 10.0), flip(2.0, 5.0), flip(0.5, 2.0)];
        assert!(dominates(&points[0], &points[1]));
        assert_eq!(front(&points), vec![2, 0]);
        let r = reference(&points).unwrap();
        // The front (0.5, -2), (1, -10): reference time 1 + 0.05, GFLOPS/W -2 + 0.8.
        assert!((r[0] - 1.05).abs() < 1e-12 && (r[1] + 1.2).abs() < 1e-12);
        // (0.5, -2): 0.55 * 0.8; then (1, -10): 0.05 * 8.
        let hv = hypervolume(&points, r);
        assert!((hv - (0.55 * 0.8 + 0.05 * 8.0)).abs() < 1e-9, "{hv}");
    }

    #[test]
    fn ranks_peel_fronts_and_crowding_favours_the_lonely() {
        let points: [&[f64]; 5] = [
            &[1.0, 5.0],
            &[2.0, 3.0],
            &[3.0, 2.9],
            &[5.0, 1.0],
            &[3.0, 4.0],
        ];
        assert_eq!(ranks(&points), vec![0, 0, 0, 0, 1]);
        let c = crowding(&points[..4]);
        assert!(c[0].is_infinite() && c[3].is_infinite());
        // (2, 3): (3 - 1) / 4 + (5 - 2.9) / 4; (3, 2.9): (5 - 2) / 4 + (3 - 1) / 4.
        assert!(
            (c[1] - 1.025).abs() < 1e-12 && (c[2] - 1.25).abs() < 1e-12,
            "{c:?}"
        );
        assert!(ranks(&[]).is_empty());
    }
}
