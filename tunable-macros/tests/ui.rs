//! Compile errors of `#[tunable]`, each spanned on the offending token (committed `.stderr`), and
//! a program using every option.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
