//! # The constraint expression language
//!
//! Kernel Tuner writes restrictions as Python expressions; `#[tunable]` users write Rust-flavoured
//! ones. This module accepts both: `and` / `or` / `not` and `&&` / `||` / `!`, chained
//! comparisons (`32 <= a * b <= 1024`), `/` as true division, `//`, `%`, `**`, unary minus,
//! parentheses, `in` / `not in` over literal lists or tuples, string and boolean literals (`True`,
//! `true`), int and float literals, and the functions `abs`, `min`, `max`.
//!
//! Semantics are Python's (arithmetic lives in one module shared by both evaluators); an error while evaluating (division or
//! modulo by zero) makes that configuration invalid and never panics.
//!
//! ```
//! use tunable_search::expr::parse;
//! let e = parse("32 <= block_size_x * block_size_y <= 1024 and tile % 2 == 0").unwrap();
//! let err = parse("a + * b").unwrap_err();
//! assert_eq!(err.span.start, 4);
//! ```

pub mod ast;
pub(crate) mod compile;
mod error;
pub(crate) mod interp;
mod lexer;
pub(crate) mod num;
mod parser;
pub(crate) mod program;
mod span;

pub use error::{ExprError, ExprErrorKind};
pub use parser::parse;
pub use span::Span;
