//! `cargo tunable bench --objective` and `--objectives`: other fields of a cache, energy of a
//! clock landscape, and the found front's hypervolume.

use std::process::{Command, Output};

fn shared(rel: &str) -> String {
    format!("{}/../../shared/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn bench(name: &str, args: &[&str]) -> (Output, std::path::PathBuf) {
    let out = std::env::temp_dir().join(format!("tunable-bench-{name}-{}", std::process::id()));
    let r = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
        .args(["tunable", "bench"])
        .args(args)
        .args(["--repeats", "3", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    (r, out)
}

fn runs(out: &std::path::Path, stem: &str, strategy: &str) -> Vec<Vec<Option<f64>>> {
    let text = std::fs::read_to_string(out.join(stem).join(format!("{strategy}.json"))).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    file["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64()).collect())
        .collect()
}

#[test]
fn a_cache_field_is_replayed_and_a_maximized_one_negated() {
    let cache = shared("energy/vector_add_RTX_4000_Ada_time_energy.json");
    let stem = "vector_add_RTX_4000_Ada_time_energy";
    let (r, out) = bench(
        "field",
        &[
            "--cache",
            &cache,
            "--objective",
            "ps_energy",
            "--strategy",
            "random",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // PowerSensor energy of one run is a fraction of a joule; the times are ~3 ms.
    let energy = runs(&out, stem, "random");
    assert!(
        energy
            .iter()
            .flatten()
            .all(|v| v.is_some_and(|v| (0.1..0.5).contains(&v)))
    );
    std::fs::remove_dir_all(&out).ok();
    let (r, out) = bench(
        "max",
        &[
            "--cache",
            &cache,
            "--objective",
            "GFLOPS/W",
            "--maximize",
            "--strategy",
            "random",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        runs(&out, stem, "random")
            .iter()
            .flatten()
            .all(|v| v.is_some_and(|v| v < 0.0))
    );
    std::fs::remove_dir_all(&out).ok();
    let (r, out) = bench(
        "missing",
        &[
            "--cache",
            &cache,
            "--objective",
            "nvml_energy",
            "--strategy",
            "random",
        ],
    );
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("no record has a numeric 'nvml_energy'"));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn a_product_of_fields_is_energy_where_a_cache_records_power() {
    let cache = shared("energy/synthetic_fp32_RTX_A4000.json");
    let (r, out) = bench(
        "product",
        &[
            "--cache",
            &cache,
            "--objective",
            "nvml_power*time",
            "--strategy",
            "random",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // ~140 W times ~77 ms: ~10^4 mJ.
    let energy = runs(&out, "synthetic_fp32_RTX_A4000", "random");
    assert!(
        energy
            .iter()
            .flatten()
            .all(|v| v.is_some_and(|v| (1e3..1e5).contains(&v)))
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn two_objectives_score_the_found_front() {
    let (r, out) = bench(
        "front",
        &[
            "--stress",
            "tile_clock:n=1000:d=5",
            "--objectives",
            "time,energy",
            "--strategy",
            "random,mls",
            "--budget",
            "60",
            "--anytime",
            "10,60",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8(r.stdout).unwrap();
    assert!(
        table.contains("Hypervolume of the found front (time, energy)"),
        "{table}"
    );
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("Hypervolume of the found front"))
        .find(|l| l.starts_with("| random |"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<f64> = row
        .split('|')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    // Mean at 10, worst run at 10, mean at 60, worst run at 60: fractions, growing.
    assert!(cells.iter().all(|c| (0.0..=1.0).contains(c)), "{row}");
    assert!(cells[0] <= cells[2], "{row}");
    // On a landscape without energy the objective is refused.
    let (r, out2) = bench(
        "noenergy",
        &[
            "--stress",
            "heavy_tail:n=200:d=2",
            "--objective",
            "energy",
            "--strategy",
            "random",
        ],
    );
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("no objective 'energy'"));
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_dir_all(&out2).ok();
}

#[test]
fn multi_objective_strategies_search_for_the_front_under_objectives() {
    let (r, out) = bench(
        "multi",
        &[
            "--stress",
            "tile_clock:n=1000:d=5",
            "--objectives",
            "time,energy",
            "--strategy",
            "nsga,auto,genetic",
            "--budget",
            "40",
            "--anytime",
            "10,40",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let table = String::from_utf8(r.stdout).unwrap();
    let front: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("Hypervolume of the found front"))
        .collect();
    assert!(front[0].contains("nsga"), "{table}");
    for name in ["nsga", "auto", "genetic"] {
        let row = front
            .iter()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("{name}: {table}"));
        let cells: Vec<f64> = row
            .split('|')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        assert!(cells.iter().all(|c| (0.0..=1.0).contains(c)), "{row}");
    }
    // Every run spent the budget.
    for run in runs(&out, "tile_clock_N1000_D5", "nsga").iter() {
        assert_eq!(run.len(), 40);
    }
    // Without --objectives a multi-objective strategy is unknown.
    let (r, out2) = bench(
        "nomulti",
        &["--stress", "tile_clock:n=1000:d=5", "--strategy", "nsga"],
    );
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown strategy 'nsga'"));
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_dir_all(&out2).ok();
}
