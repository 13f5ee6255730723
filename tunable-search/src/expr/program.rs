//! # Compiled constraint programs
//!
//! Constraints are lowered to one flat program of nodes shared by all constraints (common
//! subexpressions appear once). Node `i`'s operands are nodes `< i`, so evaluating nodes in index
//! order is a valid schedule, and the solver can evaluate each node exactly when the last
//! parameter it depends on gets a value (see `space::solve`).
//!
//! Evaluation is eager: both sides of `and` / `or` are computed, and errors (division by zero) are
//! a value, [`V::Err`], that `and` / `or` drop exactly when Python would not have evaluated that
//! side. Eager evaluation with error values therefore gives Python's short-circuit results.

use super::ast::{BinOp, CmpOp};
use super::interp::cmp_holds;
use super::num::{self, Num};
use super::span::Span;

/// A runtime value of a compiled program.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum V {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// An interned string; id 0 is the empty string.
    Str(u32),
    /// Evaluation failed (division by zero, ...): the configuration is invalid.
    Err,
}

impl V {
    fn num(self) -> Option<Num> {
        match self {
            V::Int(i) => Some(Num::Int(i)),
            V::Float(f) => Some(Num::Float(f)),
            V::Bool(b) => Some(Num::Int(i64::from(b))),
            V::Str(_) | V::Err => None,
        }
    }

    fn from_num(n: Num) -> V {
        match n {
            Num::Int(i) => V::Int(i),
            Num::Float(f) => V::Float(f),
        }
    }

    /// Python truthiness; errors are false.
    #[inline]
    pub(crate) fn truthy(self) -> bool {
        match self {
            V::Int(i) => i != 0,
            V::Float(f) => f != 0.0,
            V::Bool(b) => b,
            V::Str(id) => id != 0,
            V::Err => false,
        }
    }
}

/// One node of a program.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Const(V),
    /// The value of parameter `p`.
    Param(u16),
    Neg(u32),
    Abs(u32),
    Not(u32),
    Bin(BinOp, u32, u32),
    And(u32, u32),
    Or(u32, u32),
    /// `==`, `!=`, `<`, `<=`, `>`, `>=` (never `in`).
    Cmp(CmpOp, u32, u32),
    /// `lhs in items` (or `not in` when `negate`); the items are `lists[start..start + len]`.
    In {
        lhs: u32,
        start: u32,
        len: u32,
        negate: bool,
    },
    /// `min(...)` / `max(...)` over `lists[start..start + len]`.
    MinMax {
        max: bool,
        start: u32,
        len: u32,
    },
}

/// A conjunct: one part of a constraint that must hold on its own.
#[derive(Clone, Debug)]
pub(crate) struct Conjunct {
    /// The node whose truthiness decides the conjunct.
    pub root: u32,
    /// The parameters it reads, ascending.
    pub params: Vec<u16>,
    /// Which constraint it came from.
    pub constraint: usize,
    /// Where in that constraint.
    pub span: Span,
}

/// Constraints compiled for a list of parameters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    pub nodes: Vec<Op>,
    /// The parameters each node depends on, ascending.
    pub deps: Vec<Vec<u16>>,
    /// Operand lists of `In` and `MinMax` nodes.
    pub lists: Vec<u32>,
    /// Interned strings; index 0 is `""`.
    pub strings: Vec<String>,
    /// Every parameter's values, as program values.
    pub param_values: Vec<Vec<V>>,
    pub conjuncts: Vec<Conjunct>,
}

impl Program {
    /// Evaluates node `id`, reading its operands from `slots`; `slots[id]` itself is not written.
    #[inline]
    pub(crate) fn eval(&self, id: usize, slots: &[V]) -> V {
        match self.nodes[id] {
            Op::Const(v) => v,
            // Parameters are stored into their slot by the caller.
            Op::Param(_) => slots[id],
            Op::Neg(a) => slots[a as usize]
                .num()
                .map_or(V::Err, |n| V::from_num(num::neg(n))),
            Op::Abs(a) => slots[a as usize]
                .num()
                .map_or(V::Err, |n| V::from_num(num::abs(n))),
            Op::Not(a) => match slots[a as usize] {
                V::Err => V::Err,
                v => V::Bool(!v.truthy()),
            },
            Op::Bin(op, a, b) => match (slots[a as usize], slots[b as usize]) {
                (V::Int(x), V::Int(y))
                    if matches!(op, BinOp::Mul | BinOp::Add | BinOp::Sub | BinOp::Mod) =>
                {
                    // Fast paths for the common integer operations.
                    match op {
                        BinOp::Mul => x
                            .checked_mul(y)
                            .map_or_else(|| V::Float(x as f64 * y as f64), V::Int),
                        BinOp::Add => x
                            .checked_add(y)
                            .map_or_else(|| V::Float(x as f64 + y as f64), V::Int),
                        BinOp::Sub => x
                            .checked_sub(y)
                            .map_or_else(|| V::Float(x as f64 - y as f64), V::Int),
                        _ => num::arith(op, Num::Int(x), Num::Int(y)).map_or(V::Err, V::from_num),
                    }
                }
                (l, r) => match (l.num(), r.num()) {
                    (Some(x), Some(y)) => num::arith(op, x, y).map_or(V::Err, V::from_num),
                    _ => V::Err,
                },
            },
            Op::And(a, b) => match slots[a as usize] {
                V::Err => V::Err,
                l if !l.truthy() => l,
                _ => slots[b as usize],
            },
            Op::Or(a, b) => match slots[a as usize] {
                V::Err => V::Err,
                l if l.truthy() => l,
                _ => slots[b as usize],
            },
            Op::Cmp(op, a, b) => self.compare(op, slots[a as usize], slots[b as usize]),
            Op::In {
                lhs,
                start,
                len,
                negate,
            } => {
                let l = slots[lhs as usize];
                if l == V::Err {
                    return V::Err;
                }
                let items = &self.lists[start as usize..(start + len) as usize];
                let mut found = false;
                for &i in items {
                    match self.compare(CmpOp::Eq, l, slots[i as usize]) {
                        V::Err => return V::Err,
                        v => found |= v.truthy(),
                    }
                }
                V::Bool(found != negate)
            }
            Op::MinMax { max, start, len } => {
                let mut best: Option<Num> = None;
                for &i in &self.lists[start as usize..(start + len) as usize] {
                    let Some(n) = slots[i as usize].num() else {
                        return V::Err;
                    };
                    best = Some(match best {
                        None => n,
                        Some(b) => {
                            let o = num::compare(n, b);
                            let better = if max {
                                o == Some(std::cmp::Ordering::Greater)
                            } else {
                                o == Some(std::cmp::Ordering::Less)
                            };
                            if better { n } else { b }
                        }
                    });
                }
                best.map_or(V::Err, V::from_num)
            }
        }
    }

    fn compare(&self, op: CmpOp, l: V, r: V) -> V {
        if l == V::Err || r == V::Err {
            return V::Err;
        }
        if let (Some(x), Some(y)) = (l.num(), r.num()) {
            if let (Num::Int(a), Num::Int(b)) = (x, y) {
                return V::Bool(cmp_holds(op, a.cmp(&b)));
            }
            return V::Bool(num::compare(x, y).is_some_and(|o| cmp_holds(op, o)));
        }
        match (l, r, op) {
            (V::Str(a), V::Str(b), CmpOp::Eq) => V::Bool(a == b),
            (V::Str(a), V::Str(b), CmpOp::Ne) => V::Bool(a != b),
            (V::Str(a), V::Str(b), _) => V::Bool(cmp_holds(
                op,
                self.strings[a as usize].cmp(&self.strings[b as usize]),
            )),
            // A string against a number: never equal, and not ordered.
            (_, _, CmpOp::Eq) => V::Bool(false),
            (_, _, CmpOp::Ne) => V::Bool(true),
            _ => V::Err,
        }
    }

    /// The operands of node `id`.
    pub(crate) fn operands(&self, id: usize) -> Vec<u32> {
        operands_of(&self.nodes[id], &self.lists)
    }

    /// The number of assignments of a conjunct's parameters (saturating).
    pub(crate) fn assignments(&self, c: &Conjunct) -> usize {
        c.params
            .iter()
            .map(|&p| self.param_values[p as usize].len())
            .try_fold(1usize, |a, n| a.checked_mul(n))
            .unwrap_or(usize::MAX)
    }

    /// Writes assignment number `t` (mixed radix over the conjunct's parameters) into `assign`,
    /// which holds one `(param, index)` per parameter of `c`.
    pub(crate) fn assignment(&self, c: &Conjunct, mut t: usize, assign: &mut [(u16, u16)]) {
        for (a, &p) in assign.iter_mut().zip(&c.params) {
            let n = self.param_values[p as usize].len();
            *a = (p, (t % n) as u16);
            t /= n;
        }
    }

    /// Evaluates every conjunct for one complete configuration (value indices per parameter).
    pub(crate) fn check(&self, indices: &[u16], scratch: &mut Vec<V>) -> bool {
        scratch.clear();
        scratch.resize(self.nodes.len(), V::Err);
        for id in 0..self.nodes.len() {
            scratch[id] = match self.nodes[id] {
                Op::Param(p) => self.param_values[p as usize][indices[p as usize] as usize],
                _ => self.eval(id, scratch),
            };
        }
        self.conjuncts
            .iter()
            .all(|c| scratch[c.root as usize].truthy())
    }

    /// Evaluates only the nodes `root` needs, for a partial assignment given as `(param, index)`.
    pub(crate) fn eval_root(&self, root: u32, assign: &[(u16, u16)], scratch: &mut Vec<V>) -> V {
        scratch.clear();
        scratch.resize(root as usize + 1, V::Err);
        for id in 0..=root as usize {
            scratch[id] = match self.nodes[id] {
                Op::Param(p) => match assign.iter().find(|(q, _)| *q == p) {
                    Some(&(_, i)) => self.param_values[p as usize][i as usize],
                    None => V::Err, // not needed by `root`
                },
                _ => self.eval(id, scratch),
            };
        }
        scratch[root as usize]
    }
}

/// The operands of an operation (`lists` holds the operand lists of `In` and `MinMax`).
pub(crate) fn operands_of(op: &Op, lists: &[u32]) -> Vec<u32> {
    match *op {
        Op::Const(_) | Op::Param(_) => vec![],
        Op::Neg(a) | Op::Abs(a) | Op::Not(a) => vec![a],
        Op::Bin(_, a, b) | Op::And(a, b) | Op::Or(a, b) | Op::Cmp(_, a, b) => vec![a, b],
        Op::In {
            lhs, start, len, ..
        } => {
            let mut v = vec![lhs];
            v.extend_from_slice(&lists[start as usize..(start + len) as usize]);
            v
        }
        Op::MinMax { start, len, .. } => lists[start as usize..(start + len) as usize].to_vec(),
    }
}
