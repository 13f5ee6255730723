//! Hostile tuned files meet `#[tunable]` in a real cargo build: a tuned file with a valid frame
//! and checksum around a string length of 2^62 is a compile error on the kernel's name, naming
//! the file, not an allocation failure that aborts rustc (the macro decodes with a limit).
//!
//! Shares the target folder of `end_to_end.rs` (`target/e2e`), so the dependencies are built once.

mod temp_crate;

use temp_crate::TempCrate;

const MAIN: &str = r#"
use tunable::tunable;

#[tunable(tile = [1, 2, 4])]
fn forged(n: usize) -> usize {
    n * tile
}

fn main() {
    println!("{}", forged(3));
}
"#;

/// The tuned-file frame (magic, version, length, FNV-1a 64, payload) around `payload`.
fn frame(payload: &[u8]) -> Vec<u8> {
    let fnv = payload.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut out = b"TUNABLE\0".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv.to_le_bytes());
    out.extend_from_slice(payload);
    out
}

#[test]
fn a_forged_tuned_file_is_a_compile_error_not_an_abort() {
    let c = TempCrate::new("hostile", MAIN);
    let tuned = c.dir.join("tuned");
    std::fs::create_dir_all(&tuned).unwrap();
    let mut payload = vec![1u8, 0xfd];
    payload.extend_from_slice(&(1u64 << 62).to_le_bytes());
    payload.extend_from_slice(b"forged");
    std::fs::write(tuned.join("forged.bin"), frame(&payload)).unwrap();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet"])
        .current_dir(&c.dir)
        .env("CARGO_TARGET_DIR", &c.target)
        .env_remove("TUNABLE_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    // rustc reported an error; it was not killed (SIGABRT on a failed allocation, before).
    assert!(
        !stderr.contains("signal: 6") && !stderr.contains("memory allocation of"),
        "{stderr}"
    );
    assert!(
        stderr.contains("forged.bin is unusable: a length in the 16-byte payload claims more"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fn forged(n: usize)"),
        "spanned on the kernel: {stderr}"
    );
    // Restored, the crate builds and runs.
    std::fs::remove_file(tuned.join("forged.bin")).unwrap();
    let (stdout, _) = c.run(false, &[]);
    assert_eq!(stdout.trim(), "3");
    std::fs::remove_dir_all(&c.dir).unwrap();
}
