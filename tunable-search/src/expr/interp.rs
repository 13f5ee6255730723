//! # Reference interpreter
//!
//! Evaluates a syntax tree directly, with Python's semantics and short-circuiting. It evaluates
//! the constant Python expressions of Kernel Tuner T1 files (`[2**i for i in range(0, 6)]`), and
//! it is the oracle the compiled constraint programs are tested against.

use super::ast::{BinOp, BoolOp, CmpOp, Expr, ExprKind, UnOp};
use super::error::{ExprError, ExprErrorKind};
use super::num::{self, Num};
use crate::space::Value;
use std::cmp::Ordering;

/// Most elements a list or `range` may have while evaluating (guards memory).
const MAX_LIST: usize = 1 << 22;

/// A Python value.
#[derive(Clone, Debug, PartialEq)]
pub enum PyVal {
    /// `int` or `float`.
    Num(Num),
    /// `bool`.
    Bool(bool),
    /// `str`.
    Str(String),
    /// `list` or `tuple`.
    List(Vec<PyVal>),
}

impl PyVal {
    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            PyVal::Num(n) => n.truthy(),
            PyVal::Bool(b) => *b,
            PyVal::Str(s) => !s.is_empty(),
            PyVal::List(v) => !v.is_empty(),
        }
    }

    fn as_num(&self) -> Option<Num> {
        match self {
            PyVal::Num(n) => Some(*n),
            PyVal::Bool(b) => Some(Num::Int(i64::from(*b))),
            _ => None,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            PyVal::Num(Num::Int(_)) => "int",
            PyVal::Num(Num::Float(_)) => "float",
            PyVal::Bool(_) => "bool",
            PyVal::Str(_) => "str",
            PyVal::List(_) => "list",
        }
    }

    /// Converts a scalar to a parameter [`Value`]; lists have none.
    pub fn to_value(&self) -> Option<Value> {
        Some(match self {
            PyVal::Num(Num::Int(i)) => Value::Int(*i),
            PyVal::Num(Num::Float(f)) => Value::Float(*f),
            PyVal::Bool(b) => Value::Bool(*b),
            PyVal::Str(s) => Value::Str(s.clone()),
            PyVal::List(_) => return None,
        })
    }
}

impl From<&Value> for PyVal {
    fn from(v: &Value) -> Self {
        match v {
            Value::Bool(b) => PyVal::Bool(*b),
            Value::Int(i) => PyVal::Num(Num::Int(*i)),
            Value::Float(f) => PyVal::Num(Num::Float(*f)),
            Value::Str(s) => PyVal::Str(s.clone()),
        }
    }
}

/// Evaluates `expr` (parsed from `src`), resolving free names through `env`.
pub fn eval(
    expr: &Expr,
    src: &str,
    env: &dyn Fn(&str) -> Option<PyVal>,
) -> Result<PyVal, ExprError> {
    Interp {
        src,
        env,
        scope: Vec::new(),
    }
    .eval(expr)
}

struct Interp<'a> {
    src: &'a str,
    env: &'a dyn Fn(&str) -> Option<PyVal>,
    scope: Vec<(String, PyVal)>,
}

impl Interp<'_> {
    fn fail(&self, e: &Expr, msg: impl Into<String>) -> ExprError {
        ExprError::new(ExprErrorKind::Eval(msg.into()), e.span, self.src)
    }

    fn eval(&mut self, e: &Expr) -> Result<PyVal, ExprError> {
        Ok(match &e.kind {
            ExprKind::Int(i) => PyVal::Num(Num::Int(*i)),
            ExprKind::Float(f) => PyVal::Num(Num::Float(*f)),
            ExprKind::Bool(b) => PyVal::Bool(*b),
            ExprKind::Str(s) => PyVal::Str(s.clone()),
            ExprKind::Name(n) => match self.scope.iter().rev().find(|(k, _)| k == n) {
                Some((_, v)) => v.clone(),
                None => (self.env)(n).ok_or_else(|| {
                    ExprError::new(
                        ExprErrorKind::UnknownName {
                            name: n.clone(),
                            suggestion: None,
                        },
                        e.span,
                        self.src,
                    )
                })?,
            },
            ExprKind::Unary(op, a) => {
                let v = self.eval(a)?;
                match op {
                    UnOp::Not => PyVal::Bool(!v.truthy()),
                    UnOp::Neg | UnOp::Pos => {
                        let n = v.as_num().ok_or_else(|| {
                            self.fail(
                                a,
                                format!("bad operand type for unary operator: '{}'", v.type_name()),
                            )
                        })?;
                        PyVal::Num(if *op == UnOp::Neg { num::neg(n) } else { n })
                    }
                }
            }
            ExprKind::BoolOp(op, a, b) => {
                let l = self.eval(a)?;
                match (op, l.truthy()) {
                    (BoolOp::And, false) | (BoolOp::Or, true) => l,
                    _ => self.eval(b)?,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (l, r) = (self.eval(a)?, self.eval(b)?);
                self.binary(e, *op, l, r)?
            }
            ExprKind::Compare(first, rest) => {
                let mut l = self.eval(first)?;
                for (op, re) in rest {
                    let r = self.eval(re)?;
                    if !self.compare(re, *op, &l, &r)? {
                        return Ok(PyVal::Bool(false));
                    }
                    l = r;
                }
                PyVal::Bool(true)
            }
            ExprKind::List(items) | ExprKind::Tuple(items) => PyVal::List(
                items
                    .iter()
                    .map(|i| self.eval(i))
                    .collect::<Result<_, _>>()?,
            ),
            ExprKind::Call(name, _, args) => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call(e, name, vals)?
            }
            ExprKind::ListComp {
                elt,
                var,
                iter,
                cond,
            } => {
                let items = match self.eval(iter)? {
                    PyVal::List(v) => v,
                    other => {
                        return Err(self.fail(
                            iter,
                            format!("'{}' object is not iterable", other.type_name()),
                        ));
                    }
                };
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    self.scope.push((var.clone(), item));
                    let keep = match cond {
                        Some(c) => self.eval(c).map(|v| v.truthy()),
                        None => Ok(true),
                    };
                    let r = keep.and_then(|k| {
                        if k {
                            self.eval(elt).map(Some)
                        } else {
                            Ok(None)
                        }
                    });
                    self.scope.pop();
                    if let Some(v) = r? {
                        out.push(v);
                    }
                }
                PyVal::List(out)
            }
        })
    }

    fn binary(&self, e: &Expr, op: BinOp, l: PyVal, r: PyVal) -> Result<PyVal, ExprError> {
        if let (Some(x), Some(y)) = (l.as_num(), r.as_num()) {
            return num::arith(op, x, y)
                .map(PyVal::Num)
                .ok_or_else(|| self.fail(e, arith_error(op)));
        }
        match (op, l, r) {
            (BinOp::Add, PyVal::List(mut a), PyVal::List(b)) => {
                if a.len() + b.len() > MAX_LIST {
                    return Err(self.fail(e, "list too long"));
                }
                a.extend(b);
                Ok(PyVal::List(a))
            }
            (BinOp::Mul, PyVal::List(a), n) | (BinOp::Mul, n, PyVal::List(a))
                if n.as_num().is_some() =>
            {
                let k = match n.as_num() {
                    Some(Num::Int(k)) => k.max(0) as usize,
                    _ => return Err(self.fail(e, "can't multiply sequence by non-int")),
                };
                if a.len().saturating_mul(k) > MAX_LIST {
                    return Err(self.fail(e, "list too long"));
                }
                Ok(PyVal::List(
                    a.iter().cloned().cycle().take(a.len() * k).collect(),
                ))
            }
            (op, l, r) => Err(self.fail(
                e,
                format!(
                    "unsupported operand types for {}: '{}' and '{}'",
                    op_symbol(op),
                    l.type_name(),
                    r.type_name()
                ),
            )),
        }
    }

    fn compare(&self, e: &Expr, op: CmpOp, l: &PyVal, r: &PyVal) -> Result<bool, ExprError> {
        Ok(match op {
            CmpOp::Eq => py_eq(l, r),
            CmpOp::Ne => !py_eq(l, r),
            CmpOp::In | CmpOp::NotIn => {
                let PyVal::List(items) = r else {
                    return Err(self.fail(
                        e,
                        format!("argument of type '{}' is not a list", r.type_name()),
                    ));
                };
                items.iter().any(|i| py_eq(l, i)) == (op == CmpOp::In)
            }
            _ => {
                let ord = match (l.as_num(), r.as_num(), l, r) {
                    (Some(x), Some(y), _, _) => num::compare(x, y),
                    (_, _, PyVal::Str(a), PyVal::Str(b)) => Some(a.cmp(b)),
                    _ => {
                        return Err(self.fail(
                            e,
                            format!("cannot order '{}' and '{}'", l.type_name(), r.type_name()),
                        ));
                    }
                };
                ord.is_some_and(|o| cmp_holds(op, o))
            }
        })
    }

    fn call(&self, e: &Expr, name: &str, args: Vec<PyVal>) -> Result<PyVal, ExprError> {
        let int_arg = |v: &PyVal| match v.as_num() {
            Some(Num::Int(i)) => Ok(i),
            _ => Err(self.fail(
                e,
                format!("{name}() takes integer arguments, not '{}'", v.type_name()),
            )),
        };
        match (name, args.as_slice()) {
            ("range", [_] | [_, _] | [_, _, _]) => {
                let n: Vec<i64> = args.iter().map(int_arg).collect::<Result<_, _>>()?;
                let (start, stop, step) = match n.as_slice() {
                    [stop] => (0, *stop, 1),
                    [a, b] => (*a, *b, 1),
                    [a, b, c] => (*a, *b, *c),
                    _ => unreachable!("matched above"),
                };
                if step == 0 {
                    return Err(self.fail(e, "range() arg 3 must not be zero"));
                }
                let count = if (step > 0 && stop > start) || (step < 0 && stop < start) {
                    ((i128::from(stop) - i128::from(start)).abs() + i128::from(step.abs()) - 1)
                        / i128::from(step.abs())
                } else {
                    0
                };
                if count > MAX_LIST as i128 {
                    return Err(self.fail(e, format!("range of {count} elements is too long")));
                }
                Ok(PyVal::List(
                    (0..count as i64)
                        .map(|k| PyVal::Num(Num::Int(start + k * step)))
                        .collect(),
                ))
            }
            ("list" | "tuple", [PyVal::List(v)]) => Ok(PyVal::List(v.clone())),
            ("list" | "tuple", []) => Ok(PyVal::List(vec![])),
            ("len", [PyVal::List(v)]) => Ok(PyVal::Num(Num::Int(v.len() as i64))),
            ("len", [PyVal::Str(s)]) => Ok(PyVal::Num(Num::Int(s.chars().count() as i64))),
            ("abs", [v]) => v.as_num().map(|n| PyVal::Num(num::abs(n))).ok_or_else(|| {
                self.fail(
                    e,
                    format!("bad operand type for abs(): '{}'", v.type_name()),
                )
            }),
            ("int", [v]) => match v.as_num() {
                Some(Num::Int(i)) => Ok(PyVal::Num(Num::Int(i))),
                Some(Num::Float(f)) if f.is_finite() && f.abs() < 9.2e18 => {
                    Ok(PyVal::Num(Num::Int(f.trunc() as i64)))
                }
                _ => Err(self.fail(e, format!("int() of '{}' is not supported", v.type_name()))),
            },
            ("float", [v]) => v
                .as_num()
                .map(|n| PyVal::Num(Num::Float(n.as_f64())))
                .ok_or_else(|| {
                    self.fail(
                        e,
                        format!("float() of '{}' is not supported", v.type_name()),
                    )
                }),
            ("min" | "max", _) if !args.is_empty() => {
                let items = match args.as_slice() {
                    [PyVal::List(v)] => v.clone(),
                    _ => args,
                };
                let mut best: Option<(Num, PyVal)> = None;
                for v in items {
                    let n = v
                        .as_num()
                        .ok_or_else(|| self.fail(e, format!("{name}() takes numbers")))?;
                    let better = match &best {
                        None => true,
                        Some((b, _)) => {
                            let o = num::compare(n, *b);
                            if name == "min" {
                                o == Some(Ordering::Less)
                            } else {
                                o == Some(Ordering::Greater)
                            }
                        }
                    };
                    if better {
                        best = Some((n, v));
                    }
                }
                best.map(|(_, v)| v)
                    .ok_or_else(|| self.fail(e, format!("{name}() arg is an empty sequence")))
            }
            _ => Err(self.fail(
                e,
                format!("unsupported call {name}() with {} argument(s)", args.len()),
            )),
        }
    }
}

/// Python `==` on values.
pub(crate) fn py_eq(l: &PyVal, r: &PyVal) -> bool {
    match (l.as_num(), r.as_num()) {
        (Some(x), Some(y)) => num::compare(x, y) == Some(Ordering::Equal),
        _ => match (l, r) {
            (PyVal::Str(a), PyVal::Str(b)) => a == b,
            (PyVal::List(a), PyVal::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| py_eq(x, y))
            }
            _ => false,
        },
    }
}

/// Whether an ordering satisfies a comparison operator.
pub(crate) fn cmp_holds(op: CmpOp, o: Ordering) -> bool {
    match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::Ne => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
        CmpOp::In | CmpOp::NotIn => false,
    }
}

pub(crate) fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "**",
    }
}

fn arith_error(op: BinOp) -> &'static str {
    match op {
        BinOp::Div | BinOp::FloorDiv => "division by zero",
        BinOp::Mod => "modulo by zero",
        BinOp::Pow => "invalid power (zero to a negative power, complex result or overflow)",
        _ => "float overflow",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse;

    fn ev(s: &str) -> Result<PyVal, ExprError> {
        eval(&parse(s).unwrap(), s, &|n| {
            (n == "x").then_some(PyVal::Num(Num::Int(3)))
        })
    }

    fn ints(s: &str) -> Vec<i64> {
        match ev(s).unwrap() {
            PyVal::List(v) => v
                .into_iter()
                .map(|x| match x {
                    PyVal::Num(Num::Int(i)) => i,
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn t1_value_forms() {
        assert_eq!(
            ints("[2**i for i in range(0, 6)]"),
            vec![1, 2, 4, 8, 16, 32]
        );
        assert_eq!(
            ints("[i for i in range(1, 10+1)]"),
            (1..=10).collect::<Vec<_>>()
        );
        assert_eq!(
            ints("[1, 2] + list(range(32, 96+1, 32))"),
            vec![1, 2, 32, 64, 96]
        );
        assert_eq!(ints("list(range(10, 0, -3))"), vec![10, 7, 4, 1]);
        assert_eq!(ints("[i for i in range(10) if i % 4 == 0]"), vec![0, 4, 8]);
        assert_eq!(ints("[i * x for i in (1, 2)]"), vec![3, 6]);
    }

    #[test]
    fn short_circuit_and_errors() {
        assert_eq!(ev("x == 3 or 1 / 0").unwrap(), PyVal::Bool(true));
        assert!(ev("x == 4 or 1 / 0").is_err());
        assert_eq!(ev("1 < x < 2").unwrap(), PyVal::Bool(false));
        assert_eq!(ev("x in [1, 3]").unwrap(), PyVal::Bool(true));
        assert_eq!(ev("'a' == 1").unwrap(), PyVal::Bool(false));
        assert!(ev("'a' < 1").is_err());
        assert!(ev("range(10**9)").is_err());
        assert!(ev("y").is_err());
    }
}
