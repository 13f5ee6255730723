//! # Neighbours
//!
//! The four neighbour rules of Kernel Tuner's constraint-aware strategies (Willemsen et al.,
//! "Constraint-aware Optimization in Auto-Tuning", Section IV-A), for any configuration, valid or
//! not (repairing an invalid one is their main use). Neighbours are valid configurations other than
//! the configuration itself, returned as positions in ascending order.
//!
//! Small candidate sets are enumerated and looked up in the O(1) index; large ones are found by
//! one scan over the packed keys, whichever is cheaper.

use super::Space;

/// A neighbour rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Neighbourhood {
    /// Every parameter keeps its value or moves to the previous or next value in its list.
    StrictlyAdjacent,
    /// Every parameter keeps its value or moves to the nearest previous or next value that occurs
    /// in some valid configuration (skipping values no valid configuration uses).
    Adjacent,
    /// Exactly one parameter differs.
    Hamming,
    /// The valid configurations at the smallest non-zero sum of absolute value-index differences.
    IndexDistance,
}

impl Space {
    /// The valid neighbours of `indices` (value indices, one per parameter) under `rule`.
    ///
    /// ```
    /// use tunable_search::{SpaceBuilder, space::Neighbourhood};
    /// let s = SpaceBuilder::new().param("a", [1, 2, 3, 4]).param("b", [1, 2, 3, 4])
    ///     .constraint("a != b").build().unwrap();
    /// let n = s.neighbours(&[0, 1], Neighbourhood::Hamming);
    /// assert_eq!(n.len(), 2 + 2); // a in {3, 4} (a = 2 would equal b), b in {3, 4}
    /// ```
    pub fn neighbours(&self, indices: &[u16], rule: Neighbourhood) -> Vec<usize> {
        assert_eq!(indices.len(), self.dims(), "one value index per parameter");
        match rule {
            Neighbourhood::StrictlyAdjacent => {
                let allowed: Vec<Vec<u16>> = self
                    .params()
                    .iter()
                    .zip(indices)
                    .map(|(p, &i)| {
                        let n = p.values().len() as u16;
                        [i.checked_sub(1), Some(i), (i + 1 < n).then_some(i + 1)]
                            .into_iter()
                            .flatten()
                            .collect()
                    })
                    .collect();
                self.box_neighbours(indices, &allowed)
            }
            Neighbourhood::Adjacent => {
                let marg = self.marginals();
                let allowed: Vec<Vec<u16>> = marg
                    .iter()
                    .zip(indices)
                    .map(|(seen, &i)| {
                        let lo = (0..i).rev().find(|&j| seen[j as usize]);
                        let hi = (i + 1..seen.len() as u16).find(|&j| seen[j as usize]);
                        [lo, Some(i), hi].into_iter().flatten().collect()
                    })
                    .collect();
                self.box_neighbours(indices, &allowed)
            }
            Neighbourhood::Hamming => {
                let mut out = Vec::new();
                let mut cand = indices.to_vec();
                for (p, param) in self.params().iter().enumerate() {
                    for j in 0..param.values().len() as u16 {
                        if j != indices[p] {
                            cand[p] = j;
                            out.extend(self.position(&cand));
                        }
                    }
                    cand[p] = indices[p];
                }
                out.sort_unstable();
                out
            }
            Neighbourhood::IndexDistance => {
                let layout = self.layout();
                let mut best = u32::MAX;
                let mut out = Vec::new();
                for (pos, &k) in self.keys().iter().enumerate() {
                    let mut d = 0u32;
                    for (p, &i) in indices.iter().enumerate() {
                        d += u32::from(layout.get(k, p).abs_diff(i));
                        if d > best {
                            break;
                        }
                    }
                    if d == 0 || d > best {
                        continue;
                    }
                    if d < best {
                        best = d;
                        out.clear();
                    }
                    out.push(pos);
                }
                out
            }
        }
    }

    /// Valid configurations whose every parameter index is in `allowed[p]`, except `indices`.
    fn box_neighbours(&self, indices: &[u16], allowed: &[Vec<u16>]) -> Vec<usize> {
        let count = allowed
            .iter()
            .map(|a| a.len())
            .try_fold(1usize, |acc, n| acc.checked_mul(n))
            .unwrap_or(usize::MAX);
        let mut out = Vec::new();
        if count <= self.len() / 4 {
            // Enumerate the box and look each candidate up.
            let mut cand: Vec<u16> = allowed.iter().map(|a| a[0]).collect();
            let mut digit = vec![0usize; allowed.len()];
            'outer: loop {
                if cand != indices {
                    out.extend(self.position(&cand));
                }
                for p in (0..allowed.len()).rev() {
                    digit[p] += 1;
                    if digit[p] < allowed[p].len() {
                        cand[p] = allowed[p][digit[p]];
                        continue 'outer;
                    }
                    digit[p] = 0;
                    cand[p] = allowed[p][0];
                }
                break;
            }
            out.sort_unstable();
        } else {
            let layout = self.layout();
            'keys: for (pos, &k) in self.keys().iter().enumerate() {
                let mut same = true;
                for (p, a) in allowed.iter().enumerate() {
                    let i = layout.get(k, p);
                    if !a.contains(&i) {
                        continue 'keys;
                    }
                    same &= i == indices[p];
                }
                if !same {
                    out.push(pos);
                }
            }
        }
        out
    }
}

/// The number of positions at which two configurations differ (value indices or values), a
/// difference in length counting once per extra position.
pub(crate) fn hamming<V: PartialEq>(a: &[V], b: &[V]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count() + a.len().abs_diff(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;

    fn brute(s: &Space, x: &[u16], pred: impl Fn(&[u16]) -> bool) -> Vec<usize> {
        (0..s.len())
            .filter(|&i| s.indices(i) != x && pred(&s.indices(i)))
            .collect()
    }

    #[test]
    fn rules_agree_with_their_definitions() {
        let s = SpaceBuilder::new()
            .param("a", [1, 2, 3, 4, 5, 6])
            .param("b", [1, 2, 3, 4, 5])
            .param("c", [0, 1, 2])
            .constraint("(a + b) % 3 != 0 and c <= a")
            .build()
            .unwrap();
        for x in [[0u16, 0, 0], [2, 3, 1], [5, 4, 2], [1, 1, 2]] {
            let strict = brute(&s, &x, |y| {
                y.iter().zip(&x).all(|(a, b)| a.abs_diff(*b) <= 1)
            });
            assert_eq!(s.neighbours(&x, Neighbourhood::StrictlyAdjacent), strict);
            let ham = brute(&s, &x, |y| hamming(y, &x) == 1);
            assert_eq!(s.neighbours(&x, Neighbourhood::Hamming), ham);
            let dist = |y: &[u16]| {
                y.iter()
                    .zip(&x)
                    .map(|(a, b)| a.abs_diff(*b) as u32)
                    .sum::<u32>()
            };
            let min = (0..s.len())
                .map(|i| dist(&s.indices(i)))
                .filter(|&d| d > 0)
                .min()
                .unwrap();
            assert_eq!(
                s.neighbours(&x, Neighbourhood::IndexDistance),
                brute(&s, &x, |y| dist(y) == min)
            );
            // Every value of every parameter occurs, so adjacent equals strictly adjacent here.
            assert_eq!(s.neighbours(&x, Neighbourhood::Adjacent), strict);
        }
    }

    #[test]
    fn adjacent_skips_values_no_valid_configuration_uses() {
        let s = SpaceBuilder::new()
            .param("a", [1, 2, 3, 4, 5])
            .param("b", [0, 1])
            .constraint("a != 2 and a != 3")
            .build()
            .unwrap();
        let n = s.neighbours(&[0, 0], Neighbourhood::Adjacent);
        let vals: Vec<Vec<u16>> = n.iter().map(|&i| s.indices(i)).collect();
        assert_eq!(vals, vec![vec![0, 1], vec![3, 0], vec![3, 1]]);
        assert!(
            s.neighbours(&[0, 0], Neighbourhood::StrictlyAdjacent)
                .iter()
                .all(|&i| s.indices(i)[0] == 0)
        );
    }
}
