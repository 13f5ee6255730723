//! Property tests of construction and queries against brute force, with the reference
//! interpreter ([`crate::expr::interp`]) as the oracle for what a constraint means.

use super::{Neighbourhood, Space, SpaceBuilder, Value};
use crate::expr::interp::{PyVal, eval};
use crate::expr::parse;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const NUM_PARAMS: [&str; 3] = ["a", "b", "c"];

/// A random numeric expression, fully parenthesized.
fn num_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(NUM_PARAMS.to_vec()).prop_map(str::to_owned),
        (-3i64..9).prop_map(|v| v.to_string()),
        prop::sample::select(vec!["0.5", "2.0", "1.5"]).prop_map(str::to_owned),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "//", "%", "**"]),
                inner.clone()
            )
                .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
            inner.clone().prop_map(|e| format!("(-{e})")),
            (inner.clone(), inner).prop_map(|(l, r)| format!("max({l}, {r})")),
        ]
    })
}

/// A random boolean expression mixing Python and Rust spellings.
fn bool_expr() -> impl Strategy<Value = String> {
    let cmp = prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!="]);
    let leaf = prop_oneof![
        (num_expr(), cmp.clone(), num_expr()).prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        (num_expr(), cmp.clone(), num_expr(), cmp, num_expr())
            .prop_map(|(a, o1, b, o2, c)| format!("({a} {o1} {b} {o2} {c})")),
        (
            num_expr(),
            any::<bool>(),
            prop::collection::vec(-2i64..9, 0..4)
        )
            .prop_map(|(e, neg, items)| {
                let list = items
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("({e} {} [{list}])", if neg { "not in" } else { "in" })
            }),
        prop::sample::select(vec![
            "s == 'x'",
            "s != 'y'",
            "s in ('x', 'z')",
            "s < 'y'",
            "s"
        ])
        .prop_map(|s| format!("({s})")),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["and", "or", "&&", "||"]),
                inner.clone()
            )
                .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
            (prop::sample::select(vec!["not ", "!"]), inner)
                .prop_map(|(op, e)| format!("({op}{e})")),
        ]
    })
}

fn params() -> impl Strategy<Value = Vec<Vec<i64>>> {
    prop::collection::vec(prop::collection::btree_set(-2i64..9, 1..5), 3)
        .prop_map(|sets| sets.into_iter().map(|s| s.into_iter().collect()).collect())
}

fn build(vals: &[Vec<i64>], constraints: &[String]) -> Space {
    let mut b = SpaceBuilder::new();
    for (name, v) in NUM_PARAMS.iter().zip(vals) {
        b = b.param(*name, v.iter().copied());
    }
    b.param("s", ["x", "y", "z"])
        .constraints(constraints.iter().cloned())
        .build()
        .unwrap()
}

/// The oracle: Python semantics, short-circuiting, errors make a configuration invalid.
fn oracle(space: &Space, constraints: &[String], indices: &[u16]) -> bool {
    let values = space.values_of(indices);
    let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
    let env = |n: &str| {
        names
            .iter()
            .position(|m| *m == n)
            .map(|i| PyVal::from(&values[i]))
    };
    constraints
        .iter()
        .all(|c| eval(&parse(c).unwrap(), c, &env).is_ok_and(|v| v.truthy()))
}

fn cartesian(space: &Space) -> Vec<Vec<u16>> {
    let mut all = vec![vec![]];
    for p in space.params() {
        all = all
            .into_iter()
            .flat_map(|c| (0..p.values().len() as u16).map(move |i| [c.clone(), vec![i]].concat()))
            .collect();
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The solver finds exactly the configurations brute force finds, in lexicographic order.
    #[test]
    fn solver_agrees_with_brute_force(vals in params(), constraints in prop::collection::vec(bool_expr(), 1..4)) {
        let space = build(&vals, &constraints);
        let brute: Vec<Vec<u16>> = cartesian(&space).into_iter().filter(|c| oracle(&space, &constraints, c)).collect();
        let ours: Vec<Vec<u16>> = (0..space.len()).map(|i| space.indices(i)).collect();
        prop_assert_eq!(&ours, &brute, "constraints {:?}", constraints);
        for c in cartesian(&space) {
            prop_assert_eq!(space.contains(&c), space.satisfies(&c));
        }
    }

    /// Samples and neighbours are valid configurations.
    #[test]
    fn queries_stay_in_the_space(vals in params(), constraints in prop::collection::vec(bool_expr(), 1..3), seed in any::<u64>()) {
        let space = build(&vals, &constraints);
        prop_assume!(!space.is_empty());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut picked = space.sample(&mut rng, 5);
        picked.extend(space.latin_hypercube(&mut rng, 4));
        picked.extend(space.maximin_latin_hypercube(&mut rng, 4, 3));
        let probes: Vec<Vec<u16>> = cartesian(&space).into_iter().step_by(7).collect();
        for probe in &probes {
            for rule in [Neighbourhood::StrictlyAdjacent, Neighbourhood::Adjacent, Neighbourhood::Hamming, Neighbourhood::IndexDistance] {
                let n = space.neighbours(probe, rule);
                prop_assert!(n.iter().all(|&i| space.indices(i) != *probe));
                picked.extend(n);
            }
        }
        for i in picked {
            prop_assert!(oracle(&space, &constraints, &space.indices(i)));
        }
    }

}

/// Cases per fuzz property: `TUNABLE_FUZZ_CASES` (default 2000; raise it for long fuzzing runs).
fn fuzz_cases() -> u32 {
    std::env::var("TUNABLE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Building never panics whatever the text; errors point inside it.
    #[test]
    fn arbitrary_constraints_never_panic(text in "\\PC{0,40}") {
        check_no_panic(&text)?;
    }

    /// Token soup reaches deeper into the parser than arbitrary characters.
    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(vec![
        "a", "b", "s", "1", "0", "2.5", "'x'", "True", "false", "(", ")", "[", "]", ",", "+", "-", "*", "/", "//",
        "%", "**", "==", "!=", "<", "<=", ">", ">=", "and", "or", "not", "in", "&&", "||", "!", "for", "if",
        "max", "min(", "abs(", "range(", "1e999", "99999999999999999999", "\"", "=", "&", "é",
    ]), 0..24)) {
        check_no_panic(&tokens.join(" "))?;
    }
}

fn check_no_panic(text: &str) -> Result<(), TestCaseError> {
    let r = SpaceBuilder::new()
        .param("a", [0, 1, 2])
        .param("b", [Value::Float(0.5), Value::Int(3)])
        .param("s", ["x", "y"])
        .constraint(text)
        .build();
    if let Err(crate::SpaceError::Constraint { error, .. }) = r {
        prop_assert!(
            error.span.start <= error.span.end && error.span.end <= text.len(),
            "{error:?}"
        );
        let _ = error.to_string();
    }
    Ok(())
}
