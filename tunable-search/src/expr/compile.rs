//! # Constraint compiler
//!
//! Lowers parsed constraints over a list of parameters into a [`Program`]:
//! - names resolve to parameters (an unknown name is an error that suggests the closest one);
//! - parameters with a single value become constants, and constant subexpressions are folded;
//! - identical subexpressions are shared (hash-consing);
//! - static types are checked: arithmetic on strings, ordering a string against a number and
//!   similar mistakes are errors at the operand's position;
//! - each constraint is split into conjuncts: `a and b`, chained comparisons
//!   (`32 <= x * y <= 1024` is `32 <= x * y` and `x * y <= 1024`) and `not (a or b)`.

use super::ast::{BinOp, BoolOp, CmpOp, Expr, ExprKind, UnOp};
use super::error::{ExprError, ExprErrorKind};
use super::interp::op_symbol;
use super::program::{Conjunct, Op, Program, V, operands_of};
use super::span::Span;
use crate::space::device_property::{DEVICE_PROPERTIES, PREFIX, known};
use crate::space::{DeviceProperties, Value};
use std::collections::HashMap;

/// The static type of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Num,
    Bool,
    Str,
    Any,
}

impl Ty {
    fn numeric(self) -> bool {
        matches!(self, Ty::Num | Ty::Bool | Ty::Any)
    }
}

/// Builds one [`Program`] for a list of parameters and any number of constraints.
pub(crate) struct Compiler {
    prog: Program,
    names: HashMap<String, u16>,
    all_names: Vec<String>,
    types: Vec<Ty>,
    interned: HashMap<String, u32>,
    dedup: HashMap<String, u32>,
    device: DeviceProperties,
}

impl Compiler {
    /// A compiler for parameters given as `(name, values)` in declared order.
    pub(crate) fn new<'a>(params: impl IntoIterator<Item = (&'a str, &'a [Value])>) -> Self {
        let mut c = Compiler {
            prog: Program {
                strings: vec![String::new()],
                ..Program::default()
            },
            names: HashMap::new(),
            all_names: Vec::new(),
            types: Vec::new(),
            interned: HashMap::from([(String::new(), 0)]),
            dedup: HashMap::new(),
            device: DeviceProperties::new(),
        };
        for (i, (name, values)) in params.into_iter().enumerate() {
            c.names.insert(name.to_owned(), i as u16);
            c.all_names.push(name.to_owned());
            let vals: Vec<V> = values.iter().map(|v| c.value(v)).collect();
            c.prog.param_values.push(vals);
        }
        c
    }

    /// Binds the properties `device` gives (`device.<name>` in constraints); the others stay
    /// unbound, and the conjuncts that read them hold (see `space::device`).
    pub(crate) fn device(mut self, device: DeviceProperties) -> Self {
        self.device = device;
        self
    }

    /// Whether `e` reads a device property the table does not bind.
    fn unbound(&self, e: &Expr) -> bool {
        let mut found = false;
        e.visit_names(&mut |n, _| {
            found |= n
                .strip_prefix(PREFIX)
                .is_some_and(|p| self.device.get(p).is_none());
        });
        found
    }

    fn value(&mut self, v: &Value) -> V {
        match v {
            Value::Bool(b) => V::Bool(*b),
            Value::Int(i) => V::Int(*i),
            Value::Float(f) => V::Float(*f),
            Value::Str(s) => V::Str(self.intern(s)),
        }
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.interned.get(s) {
            return id;
        }
        let id = self.prog.strings.len() as u32;
        self.prog.strings.push(s.to_owned());
        self.interned.insert(s.to_owned(), id);
        id
    }

    /// Compiles constraint number `index`, written as `src`, adding its conjuncts.
    pub(crate) fn add_constraint(
        &mut self,
        index: usize,
        src: &str,
        expr: &Expr,
    ) -> Result<(), ExprError> {
        let mut parts = Vec::new();
        Lower { c: self, src }.conjuncts(expr, false, &mut parts)?;
        for (root, span) in parts {
            let params = self.prog.deps[root as usize].clone();
            self.prog.conjuncts.push(Conjunct {
                root,
                params,
                constraint: index,
                span,
            });
        }
        Ok(())
    }

    /// The finished program.
    pub(crate) fn finish(self) -> Program {
        self.prog
    }

    /// Adds a node (folding it if its operands are constants), returning its id.
    fn push(&mut self, op: Op, ty: Ty) -> u32 {
        let key = format!("{op:?}");
        if let Some(&id) = self.dedup.get(&key) {
            return id;
        }
        let operands = operands_of(&op, &self.prog.lists);
        let mut deps: Vec<u16> = match op {
            Op::Param(p) => vec![p],
            _ => operands
                .iter()
                .flat_map(|&o| self.prog.deps[o as usize].iter().copied())
                .collect(),
        };
        deps.sort_unstable();
        deps.dedup();
        let id = self.prog.nodes.len() as u32;
        let folded = if deps.is_empty() && !matches!(op, Op::Const(_)) {
            // Every operand is a constant: evaluate now.
            let mut slots: Vec<V> = self
                .prog
                .nodes
                .iter()
                .map(|n| if let Op::Const(v) = n { *v } else { V::Err })
                .collect();
            self.prog.nodes.push(op.clone());
            slots.push(V::Err);
            let v = self.prog.eval(id as usize, &slots);
            self.prog.nodes.pop();
            Op::Const(v)
        } else {
            op
        };
        let key2 = format!("{folded:?}");
        if let Some(&existing) = self.dedup.get(&key2) {
            self.dedup.insert(key, existing);
            return existing;
        }
        self.prog.nodes.push(folded);
        self.prog.deps.push(deps);
        self.types.push(ty);
        self.dedup.insert(key, id);
        self.dedup.insert(key2, id);
        id
    }

    fn suggest(&self, name: &str) -> Option<String> {
        crate::suggest::closest(name, self.all_names.iter().map(String::as_str)).map(str::to_owned)
    }
}

struct Lower<'a> {
    c: &'a mut Compiler,
    src: &'a str,
}

impl Lower<'_> {
    fn err(&self, kind: ExprErrorKind, span: Span) -> ExprError {
        ExprError::new(kind, span, self.src)
    }

    fn type_err(&self, msg: String, span: Span) -> ExprError {
        self.err(ExprErrorKind::Type(msg), span)
    }

    /// Splits `e` (negated if `negate`) into conjuncts.
    fn conjuncts(
        &mut self,
        e: &Expr,
        negate: bool,
        out: &mut Vec<(u32, Span)>,
    ) -> Result<(), ExprError> {
        match (&e.kind, negate) {
            (ExprKind::BoolOp(BoolOp::And, a, b), false)
            | (ExprKind::BoolOp(BoolOp::Or, a, b), true) => {
                self.conjuncts(a, negate, out)?;
                self.conjuncts(b, negate, out)
            }
            (ExprKind::Unary(UnOp::Not, a), _) => self.conjuncts(a, !negate, out),
            (ExprKind::Compare(first, rest), false)
                if rest.len() > 1
                    && !rest
                        .iter()
                        .any(|(op, _)| matches!(op, CmpOp::In | CmpOp::NotIn)) =>
            {
                let mut l = self.lower(first)?;
                let mut l_span = first.span;
                let mut l_expr = first.as_ref();
                for (op, re) in rest {
                    let r = self.lower(re)?;
                    // A link that reads an unbound device property holds.
                    if !self.c.unbound(l_expr) && !self.c.unbound(re) {
                        let id = self.compare(*op, l, r, re, l_span.to(re.span))?;
                        out.push((id, l_span.to(re.span)));
                    }
                    l = r;
                    l_span = re.span;
                    l_expr = re;
                }
                Ok(())
            }
            _ => {
                let (id, _) = self.lower(e)?;
                if self.c.unbound(e) {
                    // Checked (names, types), then left to the device: it holds.
                    return Ok(());
                }
                let id = if negate {
                    self.c.push(Op::Not(id), Ty::Bool)
                } else {
                    id
                };
                out.push((id, e.span));
                Ok(())
            }
        }
    }

    fn lower(&mut self, e: &Expr) -> Result<(u32, Ty), ExprError> {
        Ok(match &e.kind {
            ExprKind::Int(i) => (self.c.push(Op::Const(V::Int(*i)), Ty::Num), Ty::Num),
            ExprKind::Float(f) => (self.c.push(Op::Const(V::Float(*f)), Ty::Num), Ty::Num),
            ExprKind::Bool(b) => (self.c.push(Op::Const(V::Bool(*b)), Ty::Bool), Ty::Bool),
            ExprKind::Str(s) => {
                let id = self.c.intern(s);
                (self.c.push(Op::Const(V::Str(id)), Ty::Str), Ty::Str)
            }
            ExprKind::Name(n) if n.starts_with(PREFIX) => {
                let property = &n[PREFIX.len()..];
                if !known(property) {
                    let suggestion = crate::suggest::closest(
                        property,
                        DEVICE_PROPERTIES.iter().map(|(n, _)| *n),
                    )
                    .map(|s| format!("{PREFIX}{s}"));
                    return Err(self.err(
                        ExprErrorKind::UnknownDeviceProperty {
                            name: n.clone(),
                            suggestion,
                        },
                        e.span,
                    ));
                }
                match self.c.device.get(property) {
                    Some(v) => (self.c.push(Op::Const(V::Int(v)), Ty::Num), Ty::Num),
                    // Never evaluated: the conjuncts that read it are dropped.
                    None => (self.c.push(Op::Const(V::Err), Ty::Any), Ty::Any),
                }
            }
            ExprKind::Name(n) => {
                let Some(&p) = self.c.names.get(n.as_str()) else {
                    let suggestion = self.c.suggest(n);
                    return Err(self.err(
                        ExprErrorKind::UnknownName {
                            name: n.clone(),
                            suggestion,
                        },
                        e.span,
                    ));
                };
                let vals = &self.c.prog.param_values[p as usize];
                let ty = match vals[0] {
                    V::Str(_) => Ty::Str,
                    V::Bool(_) => Ty::Bool,
                    _ => Ty::Num,
                };
                let op = if vals.len() == 1 {
                    Op::Const(vals[0])
                } else {
                    Op::Param(p)
                };
                (self.c.push(op, ty), ty)
            }
            ExprKind::Unary(op, a) => {
                let (id, ty) = self.lower(a)?;
                match op {
                    UnOp::Not => (self.c.push(Op::Not(id), Ty::Bool), Ty::Bool),
                    UnOp::Neg | UnOp::Pos => {
                        if !ty.numeric() {
                            return Err(self.type_err(
                                format!(
                                    "unary '{}' needs a number, not a string",
                                    if *op == UnOp::Neg { "-" } else { "+" }
                                ),
                                a.span,
                            ));
                        }
                        if *op == UnOp::Pos && ty == Ty::Num {
                            (id, Ty::Num)
                        } else if *op == UnOp::Pos {
                            // +True == 1
                            let zero = self.c.push(Op::Const(V::Int(0)), Ty::Num);
                            (self.c.push(Op::Bin(BinOp::Add, id, zero), Ty::Num), Ty::Num)
                        } else {
                            (self.c.push(Op::Neg(id), Ty::Num), Ty::Num)
                        }
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (l, lt) = self.lower(a)?;
                let (r, rt) = self.lower(b)?;
                for (t, side) in [(lt, a), (rt, b)] {
                    if !t.numeric() {
                        return Err(self.type_err(
                            format!("'{}' needs numbers, but this is a string", op_symbol(*op)),
                            side.span,
                        ));
                    }
                }
                (self.c.push(Op::Bin(*op, l, r), Ty::Num), Ty::Num)
            }
            ExprKind::BoolOp(op, a, b) => {
                let (l, lt) = self.lower(a)?;
                let (r, rt) = self.lower(b)?;
                let ty = if lt == rt { lt } else { Ty::Any };
                let node = match op {
                    BoolOp::And => Op::And(l, r),
                    BoolOp::Or => Op::Or(l, r),
                };
                (self.c.push(node, ty), ty)
            }
            ExprKind::Compare(first, rest) => {
                if let Some(r) = self.lower_membership(e)? {
                    return Ok(r);
                }
                // Inside a larger expression a chain is the `and` of its links.
                let mut l = self.lower(first)?;
                let mut l_span = first.span;
                let mut acc: Option<u32> = None;
                for (op, re) in rest {
                    let r = self.lower(re)?;
                    let link = self.compare(*op, l, r, re, l_span.to(re.span))?;
                    acc = Some(match acc {
                        None => link,
                        Some(prev) => self.c.push(Op::And(prev, link), Ty::Bool),
                    });
                    l = r;
                    l_span = re.span;
                }
                (acc.expect("a comparison has at least one link"), Ty::Bool)
            }
            ExprKind::Call(name, name_span, args) => self.call(name, *name_span, args, e.span)?,
            ExprKind::List(_) | ExprKind::Tuple(_) => {
                return Err(self.err(
                    ExprErrorKind::Unsupported(
                        "a list is only allowed after 'in' / 'not in'".to_owned(),
                    ),
                    e.span,
                ));
            }
            ExprKind::ListComp { .. } => {
                return Err(self.err(
                    ExprErrorKind::Unsupported(
                        "list comprehensions are not allowed in constraints".to_owned(),
                    ),
                    e.span,
                ));
            }
        })
    }

    /// Lowers one comparison link; `rhs_expr` is the right operand's syntax (for `in` lists).
    fn compare(
        &mut self,
        op: CmpOp,
        l: (u32, Ty),
        r: (u32, Ty),
        rhs_expr: &Expr,
        span: Span,
    ) -> Result<u32, ExprError> {
        debug_assert!(
            !matches!(op, CmpOp::In | CmpOp::NotIn),
            "membership is lowered by lower_membership"
        );
        let (lt, rt) = (l.1, r.1);
        let ordered = !matches!(op, CmpOp::Eq | CmpOp::Ne);
        if ordered
            && ((lt == Ty::Str && rt.numeric() && rt != Ty::Any)
                || (rt == Ty::Str && lt.numeric() && lt != Ty::Any))
        {
            return Err(self.type_err(
                "cannot order a string against a number".to_owned(),
                rhs_expr.span.to(span),
            ));
        }
        Ok(self.c.push(Op::Cmp(op, l.0, r.0), Ty::Bool))
    }

    fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Result<(u32, Ty), ExprError> {
        let mut ids = Vec::with_capacity(args.len());
        for a in args {
            let (id, ty) = self.lower(a)?;
            if !ty.numeric() {
                return Err(self.type_err(
                    format!("{name}() needs numbers, but this is a string"),
                    a.span,
                ));
            }
            ids.push(id);
        }
        match (name, ids.as_slice()) {
            ("abs", [a]) => Ok((self.c.push(Op::Abs(*a), Ty::Num), Ty::Num)),
            ("min" | "max", [_, _, ..]) => {
                let start = self.c.prog.lists.len() as u32;
                self.c.prog.lists.extend_from_slice(&ids);
                let op = Op::MinMax {
                    max: name == "max",
                    start,
                    len: ids.len() as u32,
                };
                Ok((self.c.push(op, Ty::Num), Ty::Num))
            }
            ("abs" | "min" | "max", _) => Err(self.err(
                ExprErrorKind::Unsupported(format!("wrong number of arguments to {name}()")),
                span,
            )),
            _ => Err(self.err(
                ExprErrorKind::Unsupported(format!(
                    "unknown function '{name}'; constraints may call abs, min and max"
                )),
                name_span,
            )),
        }
    }
}

impl Lower<'_> {
    /// `lower`, except that `x in [..]` / `x not in (..)` are handled with their literal lists.
    fn lower_membership(&mut self, e: &Expr) -> Result<Option<(u32, Ty)>, ExprError> {
        let ExprKind::Compare(first, rest) = &e.kind else {
            return Ok(None);
        };
        if !rest
            .iter()
            .any(|(op, _)| matches!(op, CmpOp::In | CmpOp::NotIn))
        {
            return Ok(None);
        }
        let mut l = self.lower(first)?;
        let mut acc: Option<u32> = None;
        let mut l_span = first.span;
        for (op, re) in rest {
            let link = if matches!(op, CmpOp::In | CmpOp::NotIn) {
                let items = match &re.kind {
                    ExprKind::List(v) | ExprKind::Tuple(v) => v,
                    _ => {
                        return Err(self.err(
                            ExprErrorKind::Unsupported(format!(
                                "'{}' needs a literal list or tuple on its right, e.g. x in [1, 2, 4]",
                                if *op == CmpOp::In { "in" } else { "not in" }
                            )),
                            re.span,
                        ));
                    }
                };
                let mut ids = Vec::with_capacity(items.len());
                for it in items {
                    ids.push(self.lower(it)?.0);
                }
                let start = self.c.prog.lists.len() as u32;
                self.c.prog.lists.extend_from_slice(&ids);
                let node = Op::In {
                    lhs: l.0,
                    start,
                    len: ids.len() as u32,
                    negate: *op == CmpOp::NotIn,
                };
                // The list is not a value that can be chained on.
                l = (u32::MAX, Ty::Any);
                self.c.push(node, Ty::Bool)
            } else {
                if l.0 == u32::MAX {
                    return Err(self.err(
                        ExprErrorKind::Unsupported(
                            "cannot chain a comparison after 'in [...]'".to_owned(),
                        ),
                        re.span,
                    ));
                }
                let r = self.lower(re)?;
                let link = self.compare(*op, l, r, re, l_span.to(re.span))?;
                l = r;
                link
            };
            l_span = re.span;
            acc = Some(match acc {
                None => link,
                Some(prev) => self.c.push(Op::And(prev, link), Ty::Bool),
            });
        }
        Ok(acc.map(|id| (id, Ty::Bool)))
    }
}
