//! # Children of the best results
//!
//! A model-free pick: a configuration that takes each parameter's value from one of the best
//! configurations found so far or from a random one, as the recombination of a grey wolf pack
//! or of a genetic algorithm's elite does. It needs no model, so it cannot be misled by one:
//! a value that the best results share is likely kept, and a value that none of them has is
//! still reached through the random parent. [`child`] draws one that is valid and not yet
//! asked.

use crate::Space;
use rand::{Rng, RngExt};

/// The best results a child takes its values from (with a random configuration beside them).
pub const PARENTS: usize = 3;
/// Draws [`child`] tries before it gives up.
pub const ATTEMPTS: usize = 64;

/// A valid configuration of `space` not `asked`, each of whose parameters takes its value
/// from one of `parents` (value indices, best first) or from a uniformly random valid
/// configuration, with equal chance; `None` if [`ATTEMPTS`] draws find none.
pub fn child<R: Rng + ?Sized>(
    space: &Space,
    parents: &[Vec<u16>],
    rng: &mut R,
    asked: impl Fn(usize) -> bool,
) -> Option<usize> {
    if parents.is_empty() || space.is_empty() {
        return None;
    }
    let dims = space.dims();
    let mut genes = vec![0u16; dims];
    for _ in 0..ATTEMPTS {
        let random = space.indices(rng.random_range(0..space.len()));
        for (k, gene) in genes.iter_mut().enumerate() {
            let from = rng.random_range(0..=parents.len());
            *gene = parents.get(from).map_or(random[k], |p| p[k]);
        }
        if let Some(position) = space.position(&genes)
            && !asked(position)
        {
            return Some(position);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn children_are_valid_unasked_and_mostly_inherit_what_the_parents_share() {
        let space = SpaceBuilder::new()
            .param("a", 0..8)
            .param("b", 0..8)
            .param("c", 0..8)
            .constraint("a + b <= 10")
            .build()
            .unwrap();
        let parents = vec![vec![2u16, 3, 5], vec![2, 4, 5], vec![2, 3, 6]];
        let taken: Vec<usize> = parents.iter().filter_map(|p| space.position(p)).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut shared = 0;
        for _ in 0..200 {
            let c = child(&space, &parents, &mut rng, |p| taken.contains(&p)).unwrap();
            let i = space.indices(c);
            assert!(space.satisfies(&i) && !taken.contains(&c));
            shared += usize::from(i[0] == 2);
        }
        // a = 2 in all three parents: drawn with chance 3/4 + 1/32 (children equal to a parent
        // are redrawn, which lowers it); a random configuration has it with chance 1/8.
        assert!(shared >= 100, "{shared}");
        assert_eq!(child(&space, &[], &mut rng, |_| false), None);
    }
}
