//! # Lexer
//!
//! Turns an expression into tokens. Python's spellings (`and`, `or`, `not`, `True`) and Rust's
//! (`&&`, `||`, `!`, `true`) lex to the same tokens, so one grammar serves Kernel Tuner's
//! restriction strings and the `#[tunable]` attribute.

use super::error::{ExprError, ExprErrorKind};
use super::span::Span;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Ident(String),
    True,
    False,
    And,
    Or,
    Not,
    In,
    For,
    If,
    Plus,
    Minus,
    Star,
    Slash,
    SlashSlash,
    Percent,
    StarStar,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Int(v) => format!("number {v}"),
            Tok::Float(v) => format!("number {v}"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::Ident(s) => format!("name '{s}'"),
            Tok::Eof => "end of expression".to_owned(),
            other => format!("'{}'", other.symbol()),
        }
    }

    /// Whether the token is an infix or keyword operator (it cannot start an operand).
    pub(crate) fn is_operator(&self) -> bool {
        matches!(
            self,
            Tok::And
                | Tok::Or
                | Tok::In
                | Tok::For
                | Tok::If
                | Tok::Star
                | Tok::Slash
                | Tok::SlashSlash
                | Tok::Percent
                | Tok::StarStar
                | Tok::Eq
                | Tok::Ne
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
        )
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::True => "True",
            Tok::False => "False",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Not => "not",
            Tok::In => "in",
            Tok::For => "for",
            Tok::If => "if",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::SlashSlash => "//",
            Tok::Percent => "%",
            Tok::StarStar => "**",
            Tok::Eq => "==",
            Tok::Ne => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            _ => "?",
        }
    }
}

/// A token with its position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Splits `src` into tokens, ending with [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ExprError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |kind, s, e| ExprError::new(kind, Span::new(s, e), src);
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, end) = lex_number(src, i)?;
            out.push(Token {
                tok,
                span: Span::new(start, end),
            });
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // `device.<property>` is one name (see `space::device`).
            if &src[start..i] == "device"
                && bytes.get(i) == Some(&b'.')
                && bytes
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            {
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
            }
            let word = &src[start..i];
            let tok = match word {
                "and" => Tok::And,
                "or" => Tok::Or,
                "not" => Tok::Not,
                "in" => Tok::In,
                "for" => Tok::For,
                "if" => Tok::If,
                "True" | "true" => Tok::True,
                "False" | "false" => Tok::False,
                _ => Tok::Ident(word.to_owned()),
            };
            out.push(Token {
                tok,
                span: Span::new(start, i),
            });
            continue;
        }
        if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            let mut s = String::new();
            loop {
                match bytes.get(j) {
                    None => return Err(err(ExprErrorKind::UnterminatedString, start, src.len())),
                    Some(&q) if q == c => break,
                    Some(b'\\') if j + 1 < bytes.len() => {
                        let ch = src[j + 1..].chars().next().unwrap_or('\\');
                        s.push(match ch {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        j += 1 + ch.len_utf8();
                    }
                    Some(_) => {
                        let ch = src[j..].chars().next().unwrap_or('\u{fffd}');
                        s.push(ch);
                        j += ch.len_utf8();
                    }
                }
            }
            i = j + 1;
            out.push(Token {
                tok: Tok::Str(s),
                span: Span::new(start, i),
            });
            continue;
        }
        let two = bytes.get(i + 1).copied();
        let (tok, len) = match (c, two) {
            (b'*', Some(b'*')) => (Tok::StarStar, 2),
            (b'/', Some(b'/')) => (Tok::SlashSlash, 2),
            (b'=', Some(b'=')) => (Tok::Eq, 2),
            (b'!', Some(b'=')) => (Tok::Ne, 2),
            (b'<', Some(b'=')) => (Tok::Le, 2),
            (b'>', Some(b'=')) => (Tok::Ge, 2),
            (b'&', Some(b'&')) => (Tok::And, 2),
            (b'|', Some(b'|')) => (Tok::Or, 2),
            (b'!', _) => (Tok::Not, 1),
            (b'+', _) => (Tok::Plus, 1),
            (b'-', _) => (Tok::Minus, 1),
            (b'*', _) => (Tok::Star, 1),
            (b'/', _) => (Tok::Slash, 1),
            (b'%', _) => (Tok::Percent, 1),
            (b'<', _) => (Tok::Lt, 1),
            (b'>', _) => (Tok::Gt, 1),
            (b'(', _) => (Tok::LParen, 1),
            (b')', _) => (Tok::RParen, 1),
            (b'[', _) => (Tok::LBracket, 1),
            (b']', _) => (Tok::RBracket, 1),
            (b',', _) => (Tok::Comma, 1),
            _ => {
                let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
                let kind = match ch {
                    '=' => ExprErrorKind::Unsupported(
                        "'=' is assignment; use '==' to compare".to_owned(),
                    ),
                    '&' | '|' | '^' | '~' => ExprErrorKind::Unsupported(format!(
                        "bitwise operator '{ch}' is not supported; use 'and' / 'or' (or '&&' / '||')"
                    )),
                    _ => ExprErrorKind::UnexpectedChar(ch),
                };
                return Err(err(kind, start, start + ch.len_utf8()));
            }
        };
        out.push(Token {
            tok,
            span: Span::new(start, start + len),
        });
        i += len;
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), src.len()),
    });
    Ok(out)
}

/// Lexes a decimal int or float literal starting at `start`: `12`, `1_024`, `1.5`, `.5`, `2e3`.
fn lex_number(src: &str, start: usize) -> Result<(Tok, usize), ExprError> {
    let bytes = src.as_bytes();
    let mut i = start;
    let mut is_float = false;
    let digits = |i: &mut usize| {
        while *i < bytes.len() && (bytes[*i].is_ascii_digit() || bytes[*i] == b'_') {
            *i += 1;
        }
    };
    digits(&mut i);
    if i < bytes.len() && bytes[i] == b'.' {
        is_float = true;
        i += 1;
        digits(&mut i);
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            is_float = true;
            i = j;
            digits(&mut i);
        }
    }
    // A letter glued to a number (`12abc`) is a typo, not two tokens.
    let mut end = i;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    let text = &src[start..end];
    let bad = || {
        ExprError::new(
            ExprErrorKind::BadNumber(text.to_owned()),
            Span::new(start, end),
            src,
        )
    };
    if end != i {
        return Err(bad());
    }
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let tok = if is_float {
        Tok::Float(clean.parse().map_err(|_| bad())?)
    } else {
        Tok::Int(clean.parse().map_err(|_| bad())?)
    };
    Ok((tok, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn python_and_rust_spellings_agree() {
        assert_eq!(toks("a and not b or c"), toks("a && !b || c"));
        assert_eq!(toks("True"), toks("true"));
        assert_eq!(
            toks("a != b"),
            vec![
                Tok::Ident("a".into()),
                Tok::Ne,
                Tok::Ident("b".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("12 1.5 .5 2e3 1_024"),
            vec![
                Tok::Int(12),
                Tok::Float(1.5),
                Tok::Float(0.5),
                Tok::Float(2000.0),
                Tok::Int(1024),
                Tok::Eof
            ]
        );
        assert!(lex("12abc").is_err());
        assert!(lex("99999999999999999999").is_err());
    }

    #[test]
    fn strings_and_errors() {
        assert_eq!(
            toks("'a' \"b\""),
            vec![Tok::Str("a".into()), Tok::Str("b".into()), Tok::Eof]
        );
        let e = lex("a == 'x").unwrap_err();
        assert_eq!(e.kind, ExprErrorKind::UnterminatedString);
        assert_eq!(e.span.start, 5);
        let e = lex("a = 1").unwrap_err();
        assert_eq!(e.span, Span::new(2, 3));
        assert!(matches!(
            lex("a $ b").unwrap_err().kind,
            ExprErrorKind::UnexpectedChar('$')
        ));
    }
}
