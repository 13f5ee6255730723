//! # The constraint expression language
//!
//! The language of `constraint = "..."` in `#[tunable]` and of
//! [`SpaceBuilder::constraint`](crate::SpaceBuilder::constraint): Python's expression syntax as Kernel Tuner writes
//! restrictions, plus Rust's operators, so that both Kernel Tuner's files and Rust-minded users'
//! constraints read as they expect. This page is its reference.
//!
//! | | |
//! |---|---|
//! | logic | `and` `or` `not`, or `&&` `\|\|` `!` (all with Python's precedence: `!a == b` is `!(a == b)`) |
//! | comparison | `==` `!=` `<` `<=` `>` `>=`, chained: `32 <= bx * by <= 1024` |
//! | membership | `x in [1, 2, 4]`, `mode not in ("a", "b")` (literal lists or tuples) |
//! | arithmetic | `+` `-` `*`, `/` (true division: `3 / 2 == 1.5`), `//` (floor), `%` (sign of the divisor), `**`, unary `-` |
//! | literals | integers, floats, `'strings'` / `"strings"`, `True` / `False` / `true` / `false` |
//! | functions | `abs(x)`, `min(a, b, ...)`, `max(a, b, ...)` |
//! | grouping | parentheses |
//!
//! Semantics are Python's (arithmetic lives in one module shared by both evaluators), and
//! integers that overflow 64 bits continue as floats. An error while evaluating (division or
//! modulo by zero) makes that configuration invalid and never panics or fails a build:
//! `b == 0 or a % b == 0` works as in Python.
//!
//! ```
//! use tunable_search::expr::parse;
//! let e = parse("32 <= block_size_x * block_size_y <= 1024 and tile % 2 == 0").unwrap();
//! let err = parse("a + * b").unwrap_err();
//! assert_eq!(err.span.start, 4);
//! ```
//!
//! ## Errors
//!
//! Parse errors, unknown names (with the closest known name), type errors (arithmetic on a
//! string, ordering a string against a number), unsupported constructs and lists outside `in`
//! are reported with their position. Building a space prints them as:
//!
//! ```text
//! constraint 0 ("block_size_x * tyle <= 512"): unknown parameter 'tyle' (did you mean 'tile'?) at 15..19
//!   block_size_x * tyle <= 512
//!                  ^^^^
//! ```
//!
//! `#[tunable]` reports the same errors as compile errors on the constraint's string. For a space
//! that no configuration satisfies, [`Space::unsatisfiable_part`](crate::Space::unsatisfiable_part)
//! names the part of a constraint that can never hold.

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
