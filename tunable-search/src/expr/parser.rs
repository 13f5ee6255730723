//! # Parser
//!
//! Recursive descent over Python's expression grammar, from the loosest binding up:
//! `or` < `and` < `not` < comparisons (chained, with `in` / `not in`) < `+ -` < `* / // %` <
//! unary `- +` < `**` (right-associative; `-2**2 == -4`) < atoms (literals, names, calls,
//! parentheses, tuples, lists and list comprehensions).

use super::ast::{BinOp, BoolOp, CmpOp, Expr, ExprKind, UnOp};
use super::error::{ExprError, ExprErrorKind};
use super::lexer::{Tok, Token, lex};
use super::span::Span;

/// How deep expressions may nest before the parser gives up (protects the stack).
const MAX_DEPTH: usize = 200;
/// How many tokens an expression may have: bounds the depth of left-associative chains too.
const MAX_TOKENS: usize = 4096;

/// Parses one expression; the whole input must be consumed.
pub fn parse(src: &str) -> Result<Expr, ExprError> {
    let tokens = lex(src)?;
    if tokens.len() > MAX_TOKENS {
        return Err(ExprError::new(
            ExprErrorKind::Unsupported(format!("expression has more than {MAX_TOKENS} tokens")),
            tokens[MAX_TOKENS].span,
            src,
        ));
    }
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    p.expect(&Tok::Eof, "an operator or the end of the expression")?;
    Ok(e)
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.tokens[(self.pos + k).min(self.tokens.len() - 1)].tok
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error(&self, expected: &str) -> ExprError {
        let t = &self.tokens[self.pos];
        ExprError::new(
            ExprErrorKind::Syntax {
                expected: expected.to_owned(),
                found: t.tok.describe(),
            },
            t.span,
            self.src,
        )
    }

    fn expect(&mut self, tok: &Tok, expected: &str) -> Result<Span, ExprError> {
        if self.peek() == tok {
            Ok(self.bump().span)
        } else {
            Err(self.error(expected))
        }
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::new(
                ExprErrorKind::Unsupported(format!(
                    "expression nests deeper than {MAX_DEPTH} levels"
                )),
                self.span(),
                self.src,
            ));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.enter()?;
        let r = self.or_expr();
        self.depth -= 1;
        r
    }

    fn or_expr(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.and_expr()?;
        while self.eat(&Tok::Or) {
            let rhs = self.and_expr()?;
            lhs = bool_op(BoolOp::Or, lhs, rhs);
        }
        Ok(lhs)
    }

    fn and_expr(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.not_expr()?;
        while self.eat(&Tok::And) {
            let rhs = self.not_expr()?;
            lhs = bool_op(BoolOp::And, lhs, rhs);
        }
        Ok(lhs)
    }

    fn not_expr(&mut self) -> Result<Expr, ExprError> {
        if *self.peek() == Tok::Not {
            let start = self.bump().span;
            self.enter()?;
            let inner = self.not_expr();
            self.depth -= 1;
            let inner = inner?;
            let span = start.to(inner.span);
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(inner)),
                span,
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        let first = self.arith()?;
        let mut rest = Vec::new();
        loop {
            let op = match (self.peek(), self.peek_at(1)) {
                (Tok::Eq, _) => CmpOp::Eq,
                (Tok::Ne, _) => CmpOp::Ne,
                (Tok::Lt, _) => CmpOp::Lt,
                (Tok::Le, _) => CmpOp::Le,
                (Tok::Gt, _) => CmpOp::Gt,
                (Tok::Ge, _) => CmpOp::Ge,
                (Tok::In, _) => CmpOp::In,
                (Tok::Not, Tok::In) => {
                    self.bump();
                    CmpOp::NotIn
                }
                _ => break,
            };
            self.bump();
            rest.push((op, self.arith()?));
        }
        if rest.is_empty() {
            return Ok(first);
        }
        let span = first
            .span
            .to(rest.last().map_or(first.span, |(_, e)| e.span));
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), rest),
            span,
        })
    }

    fn arith(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.term()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => break,
            };
            self.bump();
            let rhs = self.term()?;
            lhs = binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinOp::Mul,
                Tok::Slash => BinOp::Div,
                Tok::SlashSlash => BinOp::FloorDiv,
                Tok::Percent => BinOp::Mod,
                _ => break,
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Plus => UnOp::Pos,
            _ => return self.power(),
        };
        let start = self.bump().span;
        self.enter()?;
        let inner = self.unary();
        self.depth -= 1;
        let inner = inner?;
        let span = start.to(inner.span);
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(inner)),
            span,
        })
    }

    fn power(&mut self) -> Result<Expr, ExprError> {
        let base = self.atom()?;
        if self.eat(&Tok::StarStar) {
            // The exponent may itself be signed: `2 ** -1`.
            self.enter()?;
            let exp = self.unary();
            self.depth -= 1;
            return Ok(binary(BinOp::Pow, base, exp?));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        if matches!(
            self.peek(),
            Tok::Eof | Tok::RParen | Tok::RBracket | Tok::Comma
        ) || self.peek().is_operator()
        {
            return Err(self.error("a number, a name, a string or '('"));
        }
        let t = self.bump();
        let kind = match t.tok {
            Tok::Int(v) => ExprKind::Int(v),
            Tok::Float(v) => ExprKind::Float(v),
            Tok::Str(s) => ExprKind::Str(s),
            Tok::True => ExprKind::Bool(true),
            Tok::False => ExprKind::Bool(false),
            Tok::Ident(name) => {
                if *self.peek() == Tok::LParen {
                    self.bump();
                    let (args, end) = self.sequence(&Tok::RParen, "')'")?;
                    return Ok(Expr {
                        kind: ExprKind::Call(name, t.span, args),
                        span: t.span.to(end),
                    });
                }
                ExprKind::Name(name)
            }
            Tok::LParen => {
                if *self.peek() == Tok::RParen {
                    let end = self.bump().span;
                    return Ok(Expr {
                        kind: ExprKind::Tuple(vec![]),
                        span: t.span.to(end),
                    });
                }
                let first = self.expr()?;
                if self.eat(&Tok::Comma) {
                    let (mut items, end) = self.sequence(&Tok::RParen, "')'")?;
                    items.insert(0, first);
                    return Ok(Expr {
                        kind: ExprKind::Tuple(items),
                        span: t.span.to(end),
                    });
                }
                let end = self.expect(&Tok::RParen, "')'")?;
                // Keep the inner node, widened to cover the parentheses.
                return Ok(Expr {
                    kind: first.kind,
                    span: t.span.to(end),
                });
            }
            Tok::LBracket => return self.list_or_comprehension(t.span),
            _ => {
                self.pos -= 1;
                return Err(self.error("a number, a name, a string or '('"));
            }
        };
        Ok(Expr { kind, span: t.span })
    }

    /// Parses `a, b, c <close>` (possibly empty, trailing comma allowed) after the opener.
    fn sequence(&mut self, close: &Tok, close_desc: &str) -> Result<(Vec<Expr>, Span), ExprError> {
        let mut items = Vec::new();
        loop {
            if *self.peek() == *close {
                return Ok((items, self.bump().span));
            }
            items.push(self.expr()?);
            if !self.eat(&Tok::Comma) {
                let end = self.expect(close, &format!("',' or {close_desc}"))?;
                return Ok((items, end));
            }
        }
    }

    fn list_or_comprehension(&mut self, open: Span) -> Result<Expr, ExprError> {
        if *self.peek() == Tok::RBracket {
            let end = self.bump().span;
            return Ok(Expr {
                kind: ExprKind::List(vec![]),
                span: open.to(end),
            });
        }
        let first = self.expr()?;
        if self.eat(&Tok::For) {
            let Tok::Ident(var) = self.peek().clone() else {
                return Err(self.error("a loop variable name"));
            };
            self.bump();
            self.expect(&Tok::In, "'in'")?;
            // The iterable stops before `if` and `]`: parse it above the comparison level.
            let iter = self.arith()?;
            let cond = if self.eat(&Tok::If) {
                Some(Box::new(self.arith_or_compare()?))
            } else {
                None
            };
            let end = self.expect(&Tok::RBracket, "']'")?;
            return Ok(Expr {
                kind: ExprKind::ListComp {
                    elt: Box::new(first),
                    var,
                    iter: Box::new(iter),
                    cond,
                },
                span: open.to(end),
            });
        }
        let mut items = vec![first];
        if self.eat(&Tok::Comma) {
            let (rest, end) = self.sequence(&Tok::RBracket, "']'")?;
            items.extend(rest);
            return Ok(Expr {
                kind: ExprKind::List(items),
                span: open.to(end),
            });
        }
        let end = self.expect(&Tok::RBracket, "',' or ']'")?;
        Ok(Expr {
            kind: ExprKind::List(items),
            span: open.to(end),
        })
    }

    fn arith_or_compare(&mut self) -> Result<Expr, ExprError> {
        self.or_expr()
    }
}

fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let span = a.span.to(b.span);
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

fn bool_op(op: BoolOp, a: Expr, b: Expr) -> Expr {
    let span = a.span.to(b.span);
    Expr {
        kind: ExprKind::BoolOp(op, Box::new(a), Box::new(b)),
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(v) => format!("{v:?}"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Unary(op, a) => format!("({op:?} {})", shape(a)),
            ExprKind::Binary(op, a, b) => format!("({op:?} {} {})", shape(a), shape(b)),
            ExprKind::BoolOp(op, a, b) => format!("({op:?} {} {})", shape(a), shape(b)),
            ExprKind::Compare(a, r) => {
                let mut s = format!("(cmp {}", shape(a));
                for (op, e) in r {
                    s += &format!(" {op:?} {}", shape(e));
                }
                s + ")"
            }
            ExprKind::List(v) | ExprKind::Tuple(v) => {
                format!("[{}]", v.iter().map(shape).collect::<Vec<_>>().join(" "))
            }
            ExprKind::Call(n, _, v) => {
                format!("{n}({})", v.iter().map(shape).collect::<Vec<_>>().join(" "))
            }
            ExprKind::ListComp {
                elt,
                var,
                iter,
                cond,
            } => format!(
                "[{} for {var} in {}{}]",
                shape(elt),
                shape(iter),
                cond.as_ref()
                    .map(|c| format!(" if {}", shape(c)))
                    .unwrap_or_default()
            ),
        }
    }

    fn p(s: &str) -> String {
        shape(&parse(s).unwrap())
    }

    #[test]
    fn precedence() {
        assert_eq!(p("a + b * c"), "(Add a (Mul b c))");
        assert_eq!(p("-2 ** 2"), "(Neg (Pow 2 2))");
        assert_eq!(p("2 ** 3 ** 2"), "(Pow 2 (Pow 3 2))");
        assert_eq!(p("2 ** -1"), "(Pow 2 (Neg 1))");
        assert_eq!(p("not a == b"), "(Not (cmp a Eq b))");
        assert_eq!(p("a or b and c"), "(Or a (And b c))");
        assert_eq!(p("a - b - c"), "(Sub (Sub a b) c)");
    }

    #[test]
    fn chains_membership_and_collections() {
        assert_eq!(p("32 <= a * b <= 1024"), "(cmp 32 Le (Mul a b) Le 1024)");
        assert_eq!(p("a not in (1, 2)"), "(cmp a NotIn [1 2])");
        assert_eq!(p("a in [1]"), "(cmp a In [1])");
        assert_eq!(
            p("[2**i for i in range(0, 6)]"),
            "[(Pow 2 i) for i in range(0 6)]"
        );
        assert_eq!(
            p("[i for i in range(9) if i % 2 == 0]"),
            "[i for i in range(9) if (cmp (Mod i 2) Eq 0)]"
        );
        assert_eq!(
            p("[1, 2] + list(range(32, 1024+1, 32))"),
            "(Add [1 2] list(range(32 (Add 1024 1) 32)))"
        );
    }

    #[test]
    fn spans_cover_parentheses() {
        let e = parse("(a + b) * c").unwrap();
        match e.kind {
            ExprKind::Binary(_, a, _) => assert_eq!(a.span, Span::new(0, 7)),
            _ => panic!(),
        }
    }

    #[test]
    fn errors_are_positioned() {
        let e = parse("a + ").unwrap_err();
        assert_eq!(e.span, Span::new(4, 4));
        let e = parse("(a + b").unwrap_err();
        assert!(e.message().contains("')'"), "{}", e.message());
        let e = parse("a b").unwrap_err();
        assert_eq!(e.span, Span::new(2, 3));
        assert!(parse(&"(".repeat(10_000)).is_err());
        assert!(parse(&"-".repeat(10_000)).is_err());
        assert!(parse(&"not ".repeat(10_000)).is_err());
    }
}
