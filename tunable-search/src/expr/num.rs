//! # Python numeric semantics
//!
//! One implementation of Python's arithmetic on `int` and `float`, shared by the reference
//! interpreter and the compiled constraint programs so that both agree by construction:
//! `/` is true division, `//` floors, `%` takes the sign of the divisor, `int ** negative int` is a
//! float, `bool` is an integer. Python's integers are unbounded; here an integer result that
//! overflows 64 bits becomes a float. Division or modulo by zero, `0 ** -1`, a complex result
//! (`(-8) ** 0.5`) and float overflow are `None`: an error that makes the configuration invalid.

use super::ast::BinOp;
use std::cmp::Ordering;

/// A Python number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub(crate) fn truthy(self) -> bool {
        match self {
            Num::Int(i) => i != 0,
            Num::Float(f) => f != 0.0,
        }
    }
}

fn finite(f: f64) -> Option<Num> {
    f.is_finite().then_some(Num::Float(f))
}

/// `a <op> b` with Python semantics; `None` where Python raises.
pub(crate) fn arith(op: BinOp, a: Num, b: Num) -> Option<Num> {
    use Num::{Float, Int};
    match (a, b) {
        (Int(x), Int(y)) => match op {
            BinOp::Add => Some(
                x.checked_add(y)
                    .map_or_else(|| Float(x as f64 + y as f64), Int),
            ),
            BinOp::Sub => Some(
                x.checked_sub(y)
                    .map_or_else(|| Float(x as f64 - y as f64), Int),
            ),
            BinOp::Mul => Some(
                x.checked_mul(y)
                    .map_or_else(|| Float(x as f64 * y as f64), Int),
            ),
            BinOp::Div => (y != 0).then(|| Float(x as f64 / y as f64)),
            BinOp::FloorDiv => {
                if y == 0 {
                    return None;
                }
                match x.checked_div(y) {
                    Some(q) => Some(Int(if x % y != 0 && ((x < 0) != (y < 0)) {
                        q - 1
                    } else {
                        q
                    })),
                    None => Some(Float((x as f64 / y as f64).floor())), // i64::MIN // -1
                }
            }
            BinOp::Mod => {
                if y == 0 {
                    return None;
                }
                let r = x.checked_rem(y).unwrap_or(0);
                Some(Int(if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }))
            }
            BinOp::Pow => {
                if y >= 0 {
                    match u32::try_from(y).ok().and_then(|e| x.checked_pow(e)) {
                        Some(v) => Some(Int(v)),
                        None => finite((x as f64).powf(y as f64)),
                    }
                } else if x == 0 {
                    None
                } else {
                    finite((x as f64).powf(y as f64))
                }
            }
        },
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            match op {
                BinOp::Add => finite(x + y),
                BinOp::Sub => finite(x - y),
                BinOp::Mul => finite(x * y),
                BinOp::Div => (y != 0.0).then(|| x / y).and_then(finite),
                BinOp::FloorDiv => (y != 0.0).then(|| (x / y).floor()).and_then(finite),
                BinOp::Mod => {
                    if y == 0.0 {
                        return None;
                    }
                    let r = x % y;
                    finite(if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                        r + y
                    } else {
                        r
                    })
                }
                BinOp::Pow => {
                    if x == 0.0 && y < 0.0 {
                        return None;
                    }
                    if x < 0.0 && y.fract() != 0.0 {
                        return None; // complex in Python
                    }
                    finite(x.powf(y))
                }
            }
        }
    }
}

/// `-a`
pub(crate) fn neg(a: Num) -> Num {
    match a {
        Num::Int(i) => i.checked_neg().map_or(Num::Float(-(i as f64)), Num::Int),
        Num::Float(f) => Num::Float(-f),
    }
}

/// `abs(a)`
pub(crate) fn abs(a: Num) -> Num {
    match a {
        Num::Int(i) => i
            .checked_abs()
            .map_or(Num::Float((i as f64).abs()), Num::Int),
        Num::Float(f) => Num::Float(f.abs()),
    }
}

/// Numeric comparison; `None` when a NaN is involved (every ordering is then false).
pub(crate) fn compare(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        _ => a.as_f64().partial_cmp(&b.as_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Num::{Float, Int};

    #[test]
    fn python_division_semantics() {
        assert_eq!(arith(BinOp::Div, Int(7), Int(2)), Some(Float(3.5)));
        assert_eq!(arith(BinOp::FloorDiv, Int(-7), Int(2)), Some(Int(-4)));
        assert_eq!(arith(BinOp::FloorDiv, Int(7), Int(-2)), Some(Int(-4)));
        assert_eq!(arith(BinOp::Mod, Int(-7), Int(3)), Some(Int(2)));
        assert_eq!(arith(BinOp::Mod, Int(7), Int(-3)), Some(Int(-2)));
        assert_eq!(arith(BinOp::Mod, Float(-7.5), Int(2)), Some(Float(0.5)));
        assert_eq!(arith(BinOp::FloorDiv, Float(7.5), Int(2)), Some(Float(3.0)));
        assert_eq!(arith(BinOp::Mod, Int(i64::MIN), Int(-1)), Some(Int(0)));
        assert_eq!(arith(BinOp::Div, Int(1), Int(0)), None);
        assert_eq!(arith(BinOp::Mod, Int(1), Int(0)), None);
        assert_eq!(arith(BinOp::FloorDiv, Float(1.0), Float(0.0)), None);
    }

    #[test]
    fn powers_and_overflow() {
        assert_eq!(arith(BinOp::Pow, Int(2), Int(10)), Some(Int(1024)));
        assert_eq!(arith(BinOp::Pow, Int(2), Int(-1)), Some(Float(0.5)));
        assert_eq!(arith(BinOp::Pow, Int(0), Int(-1)), None);
        assert_eq!(arith(BinOp::Pow, Float(-8.0), Float(0.5)), None);
        assert_eq!(
            arith(BinOp::Pow, Int(2), Int(64)),
            Some(Float(18446744073709551616.0))
        );
        assert_eq!(
            arith(BinOp::Mul, Int(i64::MAX), Int(2)),
            Some(Float(i64::MAX as f64 * 2.0))
        );
        assert_eq!(neg(Int(i64::MIN)), Float(9223372036854775808.0));
        assert_eq!(compare(Int(1), Float(1.0)), Some(Ordering::Equal));
    }
}
