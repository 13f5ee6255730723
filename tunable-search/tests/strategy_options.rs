//! Strategy options: each key sets the field it names, every bad value is an error that names the
//! option and its value, and an unknown key lists every key the strategy accepts.

use tunable_search::bayes::BayesOptions;
use tunable_search::strategy::{
    AnnealingOptions, Crossover, DeCrossover, DiffEvoOptions, EnsembleOptions, FireflyOptions,
    GeneticOptions, Improvement, LocalSearchOptions, Mutation, Neighbour, PsoOptions, Restart,
    StrategyError, StrategySpec,
};

fn spec(s: &str) -> StrategySpec {
    s.parse().unwrap()
}

#[test]
fn keys_set_the_fields_they_name() {
    let o = spec("genetic:popsize=10:mutation_chance=8:method=uniform:elitism=0:pressure=4")
        .apply(GeneticOptions::default())
        .unwrap();
    assert_eq!(
        (
            o.popsize,
            o.mutation_chance,
            o.method,
            o.elitism,
            o.pressure
        ),
        (10, 8, Crossover::Uniform, 0, 4.0)
    );
    let o = spec("diff_evo:popsize=8:F=0.5:CR=0.9:method=rand2exp")
        .apply(DiffEvoOptions::default())
        .unwrap();
    assert_eq!(
        (o.popsize, o.f, o.cr, o.mutation, o.crossover),
        (8, 0.5, 0.9, Mutation::Rand2, DeCrossover::Exponential)
    );
    let o = spec("pso:popsize=8:w=0.7:c1=1:c2=2:maxiter=5")
        .apply(PsoOptions::default())
        .unwrap();
    assert_eq!(
        (o.popsize, o.w, o.c1, o.c2, o.maxiter),
        (8, 0.7, 1.0, 2.0, 5)
    );
    let o = spec("firefly:popsize=8:b0=0.5:gamma=2:alpha=0.1")
        .apply(FireflyOptions::default())
        .unwrap();
    assert_eq!((o.popsize, o.b0, o.gamma, o.alpha), (8, 0.5, 2.0, 0.1));
    let o = spec("annealing:t_start=2:t_min=0.5:restart=random")
        .apply(AnnealingOptions::default())
        .unwrap();
    assert_eq!((o.t_start, o.t_min, o.restart), (2.0, 0.5, Restart::Random));
    let o = spec("ils:perturbation=3:neighbour=adjacent:improvement=best")
        .apply(LocalSearchOptions::iterated())
        .unwrap();
    assert_eq!(
        (o.iterated, o.perturbation, o.neighbour, o.improvement),
        (true, 3, Neighbour::Adjacent, Improvement::Best)
    );
    assert!(!LocalSearchOptions::multi_start().iterated);
    let o = spec("ensemble:members=[mls+genetic:popsize=8]:weights=2+1")
        .apply(EnsembleOptions::default())
        .unwrap();
    assert_eq!((o.members.len(), o.weights), (2, vec![2, 1]));
}

/// Applies `s` to the defaults of its strategy.
fn apply(s: &str) -> Result<(), StrategyError> {
    let sp = spec(s);
    match sp.name.as_str() {
        "genetic" => sp.apply(GeneticOptions::default()).map(drop),
        "diff_evo" => sp.apply(DiffEvoOptions::default()).map(drop),
        "pso" => sp.apply(PsoOptions::default()).map(drop),
        "firefly" => sp.apply(FireflyOptions::default()).map(drop),
        "annealing" => sp.apply(AnnealingOptions::default()).map(drop),
        "ils" => sp.apply(LocalSearchOptions::iterated()).map(drop),
        "ensemble" => sp.apply(EnsembleOptions::default()).map(drop),
        "bayes" => sp.apply(BayesOptions::default()).map(drop),
        other => panic!("no options for {other}"),
    }
}

#[test]
fn bad_values_are_errors_that_name_the_option() {
    for bad in [
        "genetic:popsize=1",
        "genetic:mutation_chance=0",
        "genetic:method=three_point",
        "genetic:pressure=0.5",
        "genetic:constraint_aware=maybe",
        "diff_evo:popsize=3",
        "diff_evo:F=2.5",
        "diff_evo:CR=-0.1",
        "diff_evo:method=best3bin",
        "diff_evo:method=best1",
        "diff_evo:stall=0",
        "pso:popsize=1",
        "pso:w=3",
        "pso:c1=-1",
        "pso:c2=nan",
        "pso:maxiter=0",
        "firefly:popsize=1",
        "firefly:B0=1.5",
        "firefly:gamma=-1",
        "firefly:alpha=inf",
        "firefly:stall=0",
        "firefly:maxiter=x",
        "annealing:t_start=-1",
        "annealing:t_min=0",
        "annealing:t_min=0.1",
        "annealing:t_start=0.00001",
        "annealing:cycle=0",
        "annealing:hamming=2",
        "annealing:restart=never",
        "annealing:stuck=0",
        "annealing:sample=x",
        "ils:perturbation=0",
        "ils:sample=0",
        "ils:accept_worse=1.5",
        "ils:neighbour=knight",
        "ils:improvement=some",
        "ensemble:weights=0+1",
        "ensemble:members=[]",
        "bayes:feas_min=1",
        "bayes:acq=ucb",
        "bayes:clusters=0",
        "bayes:xi=-1",
    ] {
        match apply(bad) {
            Err(e @ StrategyError::BadValue { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(bad.split_once(':').unwrap().1), "{bad}: {msg}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    let e = apply("annealing:t_min=0.1").unwrap_err().to_string();
    assert!(e.contains("below t_start = 0.01"), "{e}");
}

#[test]
fn unknown_keys_list_every_key() {
    for (s, keys) in [
        (
            "genetic:nope=1",
            &[
                "popsize",
                "mutation_chance",
                "method",
                "elitism",
                "maxiter",
                "stall",
                "pressure",
                "constraint_aware",
            ][..],
        ),
        (
            "diff_evo:nope=1",
            &["popsize", "F", "CR", "method", "stall"],
        ),
        (
            "ils:popsize=1",
            &["neighbour", "perturbation", "accept_worse"],
        ),
        ("annealing:alpha=1", &["t_start", "t_min", "stuck"]),
        (
            "bayes:nope=1",
            &["acq", "feas_min", "surrogate", "clusters", "boundary"],
        ),
    ] {
        match apply(s) {
            Err(StrategyError::UnknownOption { known, .. }) => {
                for k in keys {
                    assert!(
                        known.split(", ").any(|x| x == *k),
                        "{s}: {k} not in {known}"
                    );
                }
            }
            other => panic!("{s}: {other:?}"),
        }
    }
}
