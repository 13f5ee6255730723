//! # Expression errors
//!
//! An [`ExprError`] says what is wrong, where (a [`Span`] into the source) and keeps the source so
//! that it can render the offending line with a caret underneath.

use super::span::Span;
use std::fmt;

/// What went wrong in an expression.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ExprErrorKind {
    /// A character that starts no token.
    UnexpectedChar(char),
    /// A string literal without its closing quote.
    UnterminatedString,
    /// A number literal that does not parse or does not fit in 64 bits.
    BadNumber(String),
    /// The parser expected something else here.
    Syntax {
        /// What would have been accepted.
        expected: String,
        /// What was found instead.
        found: String,
    },
    /// A name that is no parameter.
    UnknownName {
        /// The name as written.
        name: String,
        /// The closest known name, if one is close enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// A `device.` name that is no known device property.
    UnknownDeviceProperty {
        /// The name as written, `device.` included.
        name: String,
        /// The closest known property, if one is close enough to be a likely typo.
        suggestion: Option<String>,
    },
    /// An operation applied to operands of a type it does not accept.
    Type(String),
    /// A construct that the language knows but does not accept in this place.
    Unsupported(String),
    /// Evaluation failed (only for constant expressions such as T1 parameter values).
    Eval(String),
}

/// An error in an expression, with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    /// What went wrong.
    pub kind: ExprErrorKind,
    /// Where, as a byte range of `source`.
    pub span: Span,
    /// The whole expression text.
    pub source: String,
}

impl ExprError {
    pub(crate) fn new(kind: ExprErrorKind, span: Span, source: &str) -> Self {
        ExprError {
            kind,
            span,
            source: source.to_owned(),
        }
    }

    /// The message without the source excerpt, e.g. `unknown name 'blok_size_x'`.
    pub fn message(&self) -> String {
        match &self.kind {
            ExprErrorKind::UnexpectedChar(c) => format!("unexpected character {c:?}"),
            ExprErrorKind::UnterminatedString => "unterminated string literal".to_owned(),
            ExprErrorKind::BadNumber(s) => format!("invalid number literal '{s}'"),
            ExprErrorKind::Syntax { expected, found } => {
                format!("expected {expected}, found {found}")
            }
            ExprErrorKind::UnknownName {
                name,
                suggestion: Some(s),
            } => {
                format!("unknown parameter '{name}' (did you mean '{s}'?)")
            }
            ExprErrorKind::UnknownName {
                name,
                suggestion: None,
            } => format!("unknown parameter '{name}'"),
            ExprErrorKind::UnknownDeviceProperty { name, suggestion } => {
                let known: Vec<&str> = crate::space::device_property::DEVICE_PROPERTIES
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                match suggestion {
                    Some(s) => format!("unknown device property '{name}' (did you mean '{s}'?)"),
                    None => format!(
                        "unknown device property '{name}'; known: device.{}",
                        known.join(", device.")
                    ),
                }
            }
            ExprErrorKind::Type(m) | ExprErrorKind::Unsupported(m) | ExprErrorKind::Eval(m) => {
                m.clone()
            }
        }
    }

    /// The same error, with its span shifted by `offset` bytes and `source` as the text: for
    /// expressions embedded in a larger text (such as a Rust string literal).
    pub fn relocate(mut self, offset: usize, source: &str) -> Self {
        self.span = Span::new(self.span.start + offset, self.span.end + offset);
        self.source = source.to_owned();
        self
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Column counted in characters so the caret lines up under multi-byte text.
        let start = self.span.start.min(self.source.len());
        let end = self.span.end.clamp(start, self.source.len());
        let col = self.source[..start].chars().count();
        let width = self.source[start..end].chars().count().max(1);
        write!(
            f,
            "{} at {}\n  {}\n  {}{}",
            self.message(),
            self.span,
            self.source,
            " ".repeat(col),
            "^".repeat(width)
        )
    }
}

impl std::error::Error for ExprError {}
