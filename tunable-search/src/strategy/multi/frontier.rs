//! # Walking along the front
//!
//! A Pareto local search step (Paquete, Chiarandini, Stützle, "Pareto local optimum sets in the
//! biobjective traveling salesman problem"): a never-asked Hamming neighbour of a configuration
//! on the front found so far. Where the front's members differ is where the trade-off lies (a
//! clock, a power limit, a tile that trades time for energy), so a neighbour that changes a
//! parameter in which the front's members differ is drawn [`TRADE_OFF`] times as often as one
//! that changes another parameter; with one member, every parameter is alike.

use super::archive::Archive;
use crate::space::Neighbourhood;
use rand::RngExt;
use std::sync::Arc;

/// How much more often a move along a parameter that varies on the front is drawn.
pub(super) const TRADE_OFF: f64 = 8.0;

/// A never-asked Hamming neighbour of a front member (not marked asked), or `None` if every
/// front member's neighbours were asked. With `strict`, only moves along a *trade-off*
/// parameter: one in which two front members differ and agree in every other parameter;
/// `None` while there is none.
pub(super) fn front_neighbour(archive: &mut Archive, strict: bool) -> Option<usize> {
    let space = Arc::clone(&archive.space);
    let front = archive.front();
    let members: Vec<Vec<u16>> = front.iter().map(|&p| space.indices(p)).collect();
    let mut varies: Vec<bool> = (0..space.dims())
        .map(|d| members.iter().any(|m| m[d] != members[0][d]))
        .collect();
    if strict {
        varies = vec![false; space.dims()];
        for (i, a) in members.iter().enumerate() {
            for b in &members[i + 1..] {
                let differ: Vec<usize> = (0..a.len()).filter(|&d| a[d] != b[d]).collect();
                if let [d] = differ[..] {
                    varies[d] = true;
                }
            }
        }
    }
    let mut moves: Vec<(usize, f64)> = Vec::new();
    for m in &members {
        for p in space.neighbours(m, Neighbourhood::Hamming) {
            if archive.is_asked(p) || moves.iter().any(|c| c.0 == p) {
                continue;
            }
            let changed = (0..space.dims())
                .find(|&d| space.index_at(p, d) != m[d])
                .unwrap_or(0);
            if varies[changed] {
                moves.push((p, TRADE_OFF));
            } else if !strict {
                moves.push((p, 1.0));
            }
        }
    }
    let total: f64 = moves.iter().map(|m| m.1).sum();
    if moves.is_empty() {
        return None;
    }
    let mut x = archive.rng.random_range(0.0..total);
    for (p, w) in &moves {
        if x < *w {
            return Some(*p);
        }
        x -= w;
    }
    moves.last().map(|m| m.0)
}
