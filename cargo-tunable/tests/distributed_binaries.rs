//! The device binaries of a distributed study's winner, end to end on this machine: a temporary
//! crate with an OpenCL kernel (run on PoCL here) and its tuning harness; a coordinator and a
//! worker against a throw-away PostgreSQL cluster spend the budget; `study export --binaries`
//! runs the harness once more for the winner and stores its program binary beside the tuned
//! file, as local tuning does; a plain build embeds it and its first call loads it instead of
//! compiling. Skips where PostgreSQL or an OpenCL device is missing, unless `TUNABLE_REQUIRE`
//! names them.

mod dist;
mod temp_crate;

use dist::{Proc, database, output, spend};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tunable_distributed::scratch;

const LIB: &str = r#"
#![allow(unsafe_code)]
use tunable::backend::opencl::{Buffer, OpenCl, OpenClError};
use tunable::backend::{Dims, Source};
use tunable::tunable;

pub static FILL: Source = Source::new(
    "fill",
    "__kernel void fill(__global float *y, const int n) {
        const int i = get_global_id(0);
        if (i < n) y[i] = 2.0f;
    }",
);

#[tunable(block = [16, 32, 64], device = cl.device_id(), strategy = "exhaustive", budget = 3,
          repeats = 1, warmup = 0, key = n as u64)]
pub fn fill(cl: &OpenCl, y: &mut Buffer<f32>, n: usize) -> Result<(), OpenClError> {
    let dims = Dims::divide(n, block, block);
    // SAFETY: fill(float*, int); every index is checked against n.
    unsafe { cl.kernel(&FILL, params)?.launch(dims).arg(y).arg(&(n as i32)).run() }
}
"#;

const HARNESS: &str = r#"
fn main() {
    let cl = tunable::backend::opencl::OpenCl::new().expect("an OpenCL device");
    let mut y = cl.alloc::<f32>(256).unwrap();
    distbin::fill(&cl, &mut y, 256).unwrap();
}
"#;

/// Says whether there is an OpenCL device; with one, which configuration the shipped build runs
/// for n = 256 and whether its program is the embedded binary or compiled.
const MAIN: &str = r#"
fn main() {
    let cl = match tunable::backend::opencl::OpenCl::new() {
        Ok(cl) => cl,
        Err(e) => {
            println!("no OpenCL device: {e}");
            return;
        }
    };
    let mut y = cl.alloc::<f32>(256).unwrap();
    let chosen = distbin::fill_config(&cl, &mut y, 256);
    let k = cl.kernel(&distbin::FILL, &chosen.params).unwrap();
    println!("block {} origin {:?}: {}", chosen.params.block, chosen.origin, k.provenance());
    distbin::fill(&cl, &mut y, 256).unwrap();
    println!("filled {}", y.read().unwrap().iter().all(|&v| v == 2.0));
}
"#;

const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn a_studys_export_stores_the_winners_device_binary_which_a_plain_build_loads() {
    let Some(cluster) = scratch::for_tests() else {
        return;
    };
    let dir = temp_crate::write_with("distbin", LIB, MAIN, HARNESS, &["opencl"]);
    let target = temp_crate::target();
    let run_main = || {
        let built = Command::new(env!("CARGO"))
            .args(["build", "--quiet"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .status()
            .unwrap();
        assert!(built.success());
        let out = Command::new(target.join("debug/distbin"))
            .current_dir(&dir)
            .env("POCL_KERNEL_CACHE", "0")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Before any study the plain build compiles its default.
    let said = run_main();
    if let Some(why) = said.strip_prefix("no OpenCL device: ") {
        let required = std::env::var("TUNABLE_REQUIRE").unwrap_or_default();
        assert!(
            !required.split([' ', ',']).any(|r| r == "opencl"),
            "opencl is required (TUNABLE_REQUIRE={required:?}) but unavailable: {why}"
        );
        eprintln!("skipping: {why}");
        return;
    }
    assert!(said.contains("block 16 origin Default: compiled"), "{said}");

    let url = database(&cluster);
    let env = [
        ("CARGO", env!("CARGO")),
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
    ];
    let crate_dir = dir.to_str().unwrap();
    let (ok, out, err) = Proc::start_with(
        &[
            "study",
            "create",
            "--db",
            &url,
            "b",
            "--harness",
            crate_dir,
            "--kernel",
            "fill",
            "--key",
            "256",
            "--debug",
        ],
        &env,
    )
    .finish(LIMIT);
    assert!(ok, "{out}{err}");
    let said = spend(&url, "b", &["--allow", crate_dir], &env, LIMIT);
    assert!(
        said.contains("worker done: 3 results recorded (0 failed"),
        "{said}"
    );

    // Without --binaries the export stores the entry alone.
    let tuned = dir.join("tuned");
    let export = |extra: &[&str]| {
        let mut args = vec!["study", "export", "--db", &url, "b", "--out"];
        args.push(tuned.to_str().unwrap());
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-tunable"))
            .arg("tunable")
            .args(&args)
            .envs(env)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    };
    let (ok, said) = export(&[]);
    assert!(ok && said.contains("fill.bin: fill on "), "{said}");
    let artifacts = || {
        std::fs::read_dir(tuned.join("fill.artifacts"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert!(artifacts().is_empty(), "{:?}", artifacts());
    let said = run_main();
    let winner = said
        .lines()
        .find(|l| l.starts_with("block "))
        .unwrap_or_else(|| panic!("{said}"))
        .to_owned();
    assert!(winner.contains("origin Baked: compiled"), "{said}");

    // With it, the harness runs the winner once more here and its program binary is stored;
    // the plain build embeds it and loads it at its first call, computing the same.
    let (ok, said) = export(&["--binaries"]);
    assert!(!ok && said.contains("refusing to build"), "{said}");
    let (ok, said) = export(&["--binaries", "--allow", crate_dir]);
    assert!(ok, "{said}");
    let files = artifacts();
    assert!(
        files.len() == 1 && files[0].ends_with(".clbin") && said.contains(&files[0]),
        "{files:?}: {said}"
    );
    let said = run_main();
    assert!(
        said.contains(&winner.replace("compiled", "embedded binary")),
        "{winner} / {said}"
    );
    assert!(said.contains("filled true"), "{said}");

    // A study replaying a cache has no harness to build binaries with: refused, nothing written.
    let cache = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/cachefiles/pnpoly_RTX_3090.json.gz");
    if cache.exists() {
        let out = output(&[
            "study",
            "create",
            "--db",
            &url,
            "r",
            "--cache",
            cache.to_str().unwrap(),
            "--budget",
            "2",
        ]);
        assert!(out.status.success(), "{out:?}");
        let out = output(&[
            "study",
            "export",
            "--db",
            &url,
            "r",
            "--out",
            "/nonexistent",
            "--binaries",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && err.contains("study 'r': cannot export the winner's device binaries: only a study made with a harness"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
