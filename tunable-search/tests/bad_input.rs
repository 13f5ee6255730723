//! Malformed constraints: each is rejected with a message and the position of the offending text.

use tunable_search::expr::ExprErrorKind;
use tunable_search::{SpaceBuilder, SpaceError};

fn builder() -> SpaceBuilder {
    SpaceBuilder::new()
        .param("block_size_x", [32, 64, 128])
        .param("tile", [1, 2, 4])
        .param("mode", ["fast", "safe"])
}

#[test]
fn malformed_constraints_are_positioned_errors() {
    // (constraint, part of the message, the text the error points at)
    let cases: &[(&str, &str, &str)] = &[
        (
            "block_size_x *",
            "expected a number, a name, a string or '('",
            "",
        ),
        (
            "blok_size_x > 1",
            "unknown parameter 'blok_size_x' (did you mean 'block_size_x'?)",
            "blok_size_x",
        ),
        ("TILE > 1", "did you mean 'tile'?", "TILE"),
        ("zzz > 1", "unknown parameter 'zzz'", "zzz"),
        (
            "block_size_x > 'a' + 1",
            "'+' needs numbers, but this is a string",
            "'a'",
        ),
        (
            "mode * 2 > 1",
            "'*' needs numbers, but this is a string",
            "mode",
        ),
        (
            "tile < 'x'",
            "cannot order a string against a number",
            "tile < 'x'",
        ),
        ("-mode", "unary '-' needs a number", "mode"),
        ("(block_size_x > 1", "expected ')'", ""),
        (
            "block_size_x > 1)",
            "expected an operator or the end of the expression, found ')'",
            ")",
        ),
        (
            "block_size_x = 1",
            "'=' is assignment; use '==' to compare",
            "=",
        ),
        (
            "block_size_x & 1",
            "bitwise operator '&' is not supported",
            "&",
        ),
        (
            "block_size_x > 1 and",
            "expected a number, a name, a string or '('",
            "",
        ),
        ("block_size_x > 1 and and tile", "found 'and'", "and"),
        (
            "block_size_x in 4",
            "'in' needs a literal list or tuple",
            "4",
        ),
        ("foo(block_size_x) > 1", "unknown function 'foo'", "foo"),
        (
            "min(block_size_x) > 1",
            "wrong number of arguments to min()",
            "min(block_size_x)",
        ),
        ("12abc > 1", "invalid number literal '12abc'", "12abc"),
        ("mode == 'abc", "unterminated string literal", "'abc"),
        ("", "expected a number, a name, a string or '('", ""),
        ("block_size_x >> 1", "found '>'", ">"),
        (
            "[i for i in range(3)]",
            "list comprehensions are not allowed in constraints",
            "[i for i in range(3)]",
        ),
        ("block_size_x $ 2", "unexpected character '$'", "$"),
        (
            "tile > [1, 2]",
            "a list is only allowed after 'in' / 'not in'",
            "[1, 2]",
        ),
        (
            "99999999999999999999 > tile",
            "invalid number literal",
            "99999999999999999999",
        ),
        (
            "tile in [1, 2] < 3",
            "cannot chain a comparison after 'in [...]'",
            "3",
        ),
    ];
    for &(text, message, at) in cases {
        let err = builder()
            .constraint("tile >= 1")
            .constraint(text)
            .build()
            .unwrap_err();
        let SpaceError::Constraint { index, error, .. } = &err else {
            panic!("{text}: {err}")
        };
        assert_eq!(*index, 1, "{text}");
        assert!(
            error.message().contains(message),
            "{text:?}: got {:?}, want {message:?}",
            error.message()
        );
        let pointed = &text[error.span.start..error.span.end];
        assert_eq!(
            pointed, at,
            "{text:?}: points at {pointed:?} ({})",
            error.span
        );
        // The rendered error shows the source with a caret under the position.
        assert!(err.to_string().contains(text), "{err}");
    }
}

#[test]
fn rendered_error_has_a_caret_under_the_offending_name() {
    let err = builder()
        .constraint("block_size_x * tyle <= 512")
        .build()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("did you mean 'tile'?"), "{text}");
    assert!(
        text.ends_with("block_size_x * tyle <= 512\n                 ^^^^"),
        "{text}"
    );
}

#[test]
fn runtime_errors_only_invalidate_configurations() {
    // Division and modulo by zero, and a zero to a negative power, never fail the build.
    let s = SpaceBuilder::new()
        .param("a", [0, 1, 2, 4])
        .param("b", [0, 2])
        .constraint("8 % a == 0 and b / a < 3 and a ** -1 > 0.3")
        .build()
        .unwrap();
    let kept: Vec<Vec<u16>> = (0..s.len()).map(|i| s.indices(i)).collect();
    assert_eq!(kept, vec![vec![1, 0], vec![1, 1], vec![2, 0], vec![2, 1]]);
}

#[test]
fn constraint_that_nothing_satisfies_is_located() {
    let s = builder()
        .constraint("tile >= 1 and block_size_x > 1000")
        .build()
        .unwrap();
    assert!(s.is_empty());
    let (index, span) = s.unsatisfiable_part().unwrap();
    assert_eq!(
        &s.constraints()[index][span.start..span.end],
        "block_size_x > 1000"
    );
    assert!(matches!(
        tunable_search::expr::parse("a +").unwrap_err().kind,
        ExprErrorKind::Syntax { .. }
    ));
}
