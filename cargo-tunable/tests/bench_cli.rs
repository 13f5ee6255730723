//! `cargo tunable bench` end to end on a real cache.

use std::process::Command;

fn shared(rel: &str) -> String {
    format!("{}/../../shared/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bench_writes_runs_files_table_and_plot() {
    let out = std::env::temp_dir().join(format!("tunable-bench-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args([
            "tunable",
            "bench",
            "--cache",
            &shared("cachefiles/pnpoly_RTX_3090.json.gz"),
        ])
        .args([
            "--cache",
            &shared("cachefiles/dedispersion_milo_A100.json.gz"),
            "--spaces-dir",
            &shared("spaces"),
        ])
        .args([
            "--strategy",
            "random,genetic:popsize=10",
            "--budget",
            "50",
            "--repeats",
            "4",
            "--seed",
            "3",
        ])
        .args([
            "--peer",
            &shared("peer-results"),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let table = String::from_utf8(status.stdout).unwrap();
    assert!(
        table.contains("| genetic:popsize=10 |") && table.contains("| kt:pso |"),
        "{table}"
    );
    // The default score is the cut-off score; the anytime tables list the checkpoints up to the
    // budget (50): 25 and 50, per cache and per family.
    assert!(table.contains("cut-off score"), "{table}");
    assert!(
        table.contains("Anytime per kernel family (score at 25 / 50 evaluations)")
            && table.contains("Anytime per cache"),
        "{table}"
    );
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("pnpoly_RTX_3090/genetic:popsize=10.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["strategy"], "genetic:popsize=10");
    assert_eq!(file["cache"], "pnpoly_RTX_3090.json.gz");
    assert_eq!(file["budget"], 50);
    assert_eq!(file["seed"], 3);
    let runs = file["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r.as_array().unwrap().len() == 50));
    // pnpoly has failing configurations (8%): random search meets some, recorded as null.
    let random: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("pnpoly_RTX_3090/random.json")).unwrap(),
    )
    .unwrap();
    assert!(
        random["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap())
            .any(|v| v.is_null())
    );
    assert_eq!(file["strategy_seconds"].as_array().unwrap().len(), 4);
    let svg = std::fs::read_to_string(out.join("dedispersion_milo_A100/convergence.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("random (expected)"));
    // One anytime plot for the run: a line per strategy (peer rows included), random at 0.
    let anytime = std::fs::read_to_string(out.join("anytime.svg")).unwrap();
    assert!(anytime.starts_with("<svg") && anytime.trim_end().ends_with("</svg>"));
    assert!(anytime.contains("random search (0)") && anytime.contains("evaluations"));
    for name in ["random", "genetic:popsize=10", "kt:pso"] {
        assert!(anytime.contains(&format!(">{name}</text>")), "{name}");
    }
    let lines = anytime.matches("<polyline").count();
    assert!(lines >= 3, "{lines} lines");
    assert!(!out.join("anytime-stress.svg").exists());
    assert!(table.contains("anytime.svg"), "{table}");
    assert!(out.join("scores.md").exists() && out.join("scores.json").exists());
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn bench_rejects_unknown_strategies_before_running() {
    let out = std::env::temp_dir().join(format!("tunable-bench-bad-{}", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args([
            "tunable",
            "bench",
            "--cache",
            &shared("cachefiles/pnpoly_RTX_3090.json.gz"),
            "--strategy",
            "genetc",
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown strategy 'genetc'"));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn pairs_run_as_ensembles_and_loko_selects_among_them() {
    let out = std::env::temp_dir().join(format!("tunable-bench-pairs-{}", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "bench", "--pairs", "--loko"])
        .args([
            "--cache",
            &shared("cachefiles/pnpoly_RTX_3090.json.gz"),
            "--cache",
            &shared("cachefiles/gemm_clblast_RTX_3090.json.gz"),
        ])
        .args(["--strategy", "random,mls,annealing", "--budget", "40"])
        .args(["--repeats", "3", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8(r.stdout).unwrap();
    for pair in ["[random+mls]", "[random+annealing]", "[mls+annealing]"] {
        assert!(
            table.contains(&format!("| ensemble:members={pair} |")),
            "{pair} missing:\n{table}"
        );
    }
    assert!(table.contains("| held-out family |"), "{table}");
    // Families are kernel names (gemm_clblast), and the default's held-out and in-sample scores
    // are printed.
    assert!(
        table.contains("| gemm_clblast |") && table.contains("| pnpoly |"),
        "{table}"
    );
    assert!(table.contains("Mean held-out score"), "{table}");
    assert!(
        table.contains("in-sample mean over the families"),
        "{table}"
    );
    // Anytime checkpoints up to the budget (40): 25 only.
    assert!(table.contains("| strategy | 25 | worst at 25 |"), "{table}");
    assert!(!table.contains("worst at 50"), "{table}");
    assert!(table.contains("6 strategies on 2 objectives"), "{table}");
    assert!(
        out.join("gemm_clblast_RTX_3090/ensemble:members=[mls+annealing].json")
            .exists()
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn synthetic_functions_and_run_by_run_comparison() {
    let out = std::env::temp_dir().join(format!("tunable-bench-syn-{}", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args([
            "tunable",
            "bench",
            "--synthetic",
            "f4",
            "--synthetic",
            "bukin6",
        ])
        .args([
            "--grid",
            "31",
            "--strategy",
            "random,annealing",
            "--versus",
            "random",
            "--score",
            "window",
        ])
        .args([
            "--budget",
            "30",
            "--repeats",
            "10",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8(r.stdout).unwrap();
    assert!(table.contains("Run by run against random"), "{table}");
    assert!(table.contains("fixed window"), "{table}");
    let (_, versus) = table.split_once("Run by run against random").unwrap();
    let row = versus
        .lines()
        .find(|l| l.starts_with("| annealing |") && l.contains('%'))
        .unwrap_or_else(|| panic!("no comparison row:\n{table}"));
    // Four percentages: equal and strict for each function; strict never exceeds equal.
    let pct: Vec<f64> = row
        .split('|')
        .filter_map(|c| c.trim().strip_suffix('%'))
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(pct.len(), 4, "{row}");
    assert!(pct[1] <= pct[0] && pct[3] <= pct[2], "{row}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bukin6/annealing.json")).unwrap())
            .unwrap();
    assert_eq!(file["cache"], "synthetic:bukin6:31x31");
    let bad = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args([
            "tunable",
            "bench",
            "--synthetic",
            "f5",
            "--strategy",
            "random",
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown synthetic function 'f5'"));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn stress_landscapes_run_beside_caches_and_are_summarized_apart() {
    use tunable_search::sim::stress::{Landscape, StressSpec};
    let out = std::env::temp_dir().join(format!("tunable-bench-stress-{}", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "bench", "--loko"])
        .args(["--cache", &shared("cachefiles/pnpoly_RTX_3090.json.gz")])
        .args([
            "--stress",
            "flat_periodic:n=300:d=3,heavy_tail:n=400:d=3",
            "--stress",
            "noisy:n=300:d=3",
        ])
        .args(["--strategy", "random,annealing", "--budget", "60"])
        .args(["--repeats", "3", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8(r.stdout).unwrap();
    // One summary per group, each over its own cases.
    assert!(
        table.contains("Summary over the caches (1 cases)"),
        "{table}"
    );
    assert!(
        table.contains("Summary over the stress landscapes (3 cases)"),
        "{table}"
    );
    assert!(
        table.contains("| strategy | mean | worst | below random | at 25 | at 50 |"),
        "{table}"
    );
    // Each kind is a family of its own in leave-one-family-out.
    for family in [
        "| flat_periodic |",
        "| heavy_tail |",
        "| noisy |",
        "| pnpoly |",
    ] {
        assert!(table.contains(family), "{family}:\n{table}");
    }
    assert!(table.contains("Mean held-out score"), "{table}");
    assert!(table.contains("2 strategies on 4 objectives"), "{table}");
    // One anytime plot per group.
    for plot in ["anytime.svg", "anytime-stress.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).unwrap();
        assert!(svg.starts_with("<svg") && svg.matches("<polyline").count() == 2);
        assert!(svg.contains(">annealing</text>"), "{plot}");
    }
    // The noisy landscape's runs record true times (the strategy was told noisy ones): every
    // value is one of the landscape's.
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("noisy_N300_D3/annealing.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["cache"], "stress:noisy:n=300:d=3");
    let spec: StressSpec = "noisy:n=300:d=3".parse().unwrap();
    let land = Landscape::build(&spec).unwrap();
    assert!(land.noise() > 0.0);
    let truth = land.replay().values();
    for run in file["runs"].as_array().unwrap() {
        let run = run.as_array().unwrap();
        assert_eq!(run.len(), 60);
        for v in run {
            // serde_json reads floats to within an ulp, not always exactly.
            let v = v.as_f64().unwrap();
            assert!(
                truth.iter().flatten().any(|t| (t - v).abs() <= 1e-12 * t),
                "{v} is not a true time"
            );
        }
    }
    // A malformed landscape is refused before anything runs, naming the kinds.
    let bad = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args([
            "tunable",
            "bench",
            "--stress",
            "flat",
            "--strategy",
            "random",
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown landscape kind 'flat'") && err.contains("heavy_tail"),
        "{err}"
    );
    std::fs::remove_dir_all(&out).ok();
}
