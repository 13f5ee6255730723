//! # Syntax tree
//!
//! What the parser produces: an [`Expr`] tree that keeps the [`Span`] of every node. Both the
//! reference interpreter and the constraint compiler read it.

use super::span::Span;

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`, true division: always a float.
    Div,
    /// `//`, floor division.
    FloorDiv,
    /// `%`, with the sign of the divisor as in Python.
    Mod,
    /// `**`
    Pow,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `+x`
    Pos,
    /// `not x` / `!x`
    Not,
}

/// Comparison operators, including membership.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `not in`
    NotIn,
}

/// Short-circuit boolean operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `and` / `&&`
    And,
    /// `or` / `||`
    Or,
}

/// An expression node with its source span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What the node is.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: Span,
}

/// The kinds of expression node.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// A string literal.
    Str(String),
    /// A parameter (or comprehension variable) name.
    Name(String),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// An arithmetic operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b` / `a or b`.
    BoolOp(BoolOp, Box<Expr>, Box<Expr>),
    /// A comparison chain: `a < b <= c` is `Compare(a, [(Lt, b), (Le, c)])`.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `[a, b, c]`
    List(Vec<Expr>),
    /// `(a, b, c)`
    Tuple(Vec<Expr>),
    /// `f(a, b)`; the name's span is kept for errors.
    Call(String, Span, Vec<Expr>),
    /// `[elt for var in iter if cond]`
    ListComp {
        /// The element expression.
        elt: Box<Expr>,
        /// The loop variable.
        var: String,
        /// What is iterated.
        iter: Box<Expr>,
        /// The optional filter.
        cond: Option<Box<Expr>>,
    },
}

impl Expr {
    /// Calls `f` on every name in the tree, with its span.
    pub fn visit_names(&self, f: &mut dyn FnMut(&str, Span)) {
        match &self.kind {
            ExprKind::Name(n) => f(n, self.span),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) => {}
            ExprKind::Unary(_, a) => a.visit_names(f),
            ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) => {
                a.visit_names(f);
                b.visit_names(f);
            }
            ExprKind::Compare(a, rest) => {
                a.visit_names(f);
                rest.iter().for_each(|(_, e)| e.visit_names(f));
            }
            ExprKind::List(v) | ExprKind::Tuple(v) | ExprKind::Call(_, _, v) => {
                v.iter().for_each(|e| e.visit_names(f))
            }
            ExprKind::ListComp {
                elt,
                var,
                iter,
                cond,
            } => {
                iter.visit_names(f);
                let mut inner = |n: &str, s: Span| {
                    if n != var {
                        f(n, s)
                    }
                };
                elt.visit_names(&mut inner);
                if let Some(c) = cond {
                    c.visit_names(&mut inner);
                }
            }
        }
    }
}
