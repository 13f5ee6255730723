//! # Evaluation in a child process
//!
//! [`run`] starts the process an [`Evaluator`](crate::Evaluator) asked for, feeds it its input,
//! and waits for it under a time-out, calling back regularly so the worker can renew its lease.
//! Whatever the process does, the worker gets a result: the [`Answer`] it printed, or the reason
//! it gave none (killed by a signal, exited with an error, timed out, printed no answer). A
//! crashing or hanging kernel therefore costs one evaluation, never the worker:
//!
//! - the process starts in a **process group of its own**: at its time-out, and once it has
//!   exited, the whole group is killed (SIGKILL), so the processes it started do not outlive it
//!   holding a GPU;
//! - its output is read **with a cap and a deadline**: only the last [`OUTPUT_KEPT`] bytes of
//!   standard output (where the answer line is) and the end of standard error are kept, however
//!   much it prints, and a process that escaped the group while holding the pipes open is not
//!   waited for more than [`DRAIN`] after the evaluation ended;
//! - it gets **no database credentials**: the worker's `PG*` variables, `DATABASE_URL` and
//!   `TUNABLE_DB` are removed from its environment ([`crate::conninfo::scrub`]).
//!
//! `run_command` is the same supervision for other commands (building and describing a
//! harness), with their own time-outs.

use crate::process::ChildSpec;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tunable_runtime::tuner::evaluate::Answer;

/// At most this much of a child's standard error is kept for the failure's reason.
const STDERR_KEPT: usize = 400;

/// At most this much of the end of a child's standard output is kept: its answer line must fit.
pub const OUTPUT_KEPT: usize = 64 * 1024;

/// How long the output of a finished (or killed) process is still read before giving up on
/// processes that left its group holding the pipes.
pub const DRAIN: Duration = Duration::from_secs(2);

/// The end of a stream, at most `cap` bytes of it, and how much was read in all.
#[derive(Debug, Default)]
struct Tail {
    kept: Vec<u8>,
    total: u64,
    closed: bool,
}

/// How a supervised command ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// It exited (or was killed by a signal).
    Exited(ExitStatus),
    /// Its time-out passed: its process group was killed.
    TimedOut,
}

/// What a supervised command did: how it ended, and the ends of its standard output and error.
#[derive(Debug)]
pub(crate) struct Finished {
    pub ended: Ended,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    /// Bytes of standard output not kept (the output was longer than the cap).
    pub out_dropped: u64,
}

fn reader(mut from: impl Read + Send + 'static, cap: usize) -> Arc<Mutex<Tail>> {
    let tail = Arc::new(Mutex::new(Tail::default()));
    let shared = Arc::clone(&tail);
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut t = shared.lock().unwrap_or_else(|e| e.into_inner());
            t.total += n as u64;
            t.kept.extend_from_slice(&chunk[..n]);
            if t.kept.len() > 2 * cap.max(1) {
                let excess = t.kept.len() - cap;
                t.kept.drain(..excess);
            }
        }
        shared.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
    });
    tail
}

/// Kills every process of the group `pgid` (SIGKILL).
#[allow(unsafe_code)]
fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid > 0 {
        // SAFETY: kill(2) takes plain integers; a negative pid names a process group. The group
        // is the child's own (`process_group(0)`), so nothing else is signalled.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Runs `command` in a process group of its own, without the database credentials of this
/// process, writing `stdin` to it; kills the group after `timeout` (and once the command
/// exited); keeps the last `keep_out` bytes of its standard output and `keep_err` of its error.
/// Calls `tick` about every `tick_every` meanwhile. `Err` only if it cannot start.
pub(crate) fn run_command(
    command: &mut Command,
    stdin: Vec<u8>,
    timeout: Duration,
    keep_out: usize,
    keep_err: usize,
    tick_every: Duration,
    mut tick: impl FnMut(),
) -> Result<Finished, std::io::Error> {
    crate::conninfo::scrub(command);
    let mut child = command
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pgid = child.id();
    let mut input = child.stdin.take().expect("piped");
    // A child that never reads its input must not block us: write from a thread.
    std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = reader(child.stdout.take().expect("piped"), keep_out);
    let err = reader(child.stderr.take().expect("piped"), keep_err);
    let start = Instant::now();
    let step = tick_every.clamp(Duration::from_millis(1), Duration::from_millis(50));
    let mut last_tick = Instant::now();
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ended::Exited(status),
            Ok(None) => {}
            Err(_) => {
                kill_group(pgid);
                let _ = child.wait();
                break Ended::TimedOut;
            }
        }
        if start.elapsed() >= timeout {
            kill_group(pgid);
            let _ = child.wait();
            break Ended::TimedOut;
        }
        std::thread::sleep(step.min(timeout.saturating_sub(start.elapsed())));
        if last_tick.elapsed() >= tick_every {
            tick();
            last_tick = Instant::now();
        }
    };
    // What the process started dies with it: nothing in its group outlives the evaluation.
    kill_group(pgid);
    // Read what is left, but not forever: a process that left the group may hold the pipes.
    let drain_until = Instant::now() + DRAIN;
    let closed = |t: &Arc<Mutex<Tail>>| t.lock().unwrap_or_else(|e| e.into_inner()).closed;
    while !(closed(&out) && closed(&err)) && Instant::now() < drain_until {
        std::thread::sleep(Duration::from_millis(5));
    }
    let take = |t: &Arc<Mutex<Tail>>, cap: usize| {
        let t = t.lock().unwrap_or_else(|e| e.into_inner());
        let start = t.kept.len().saturating_sub(cap);
        (
            t.kept[start..].to_vec(),
            t.total - (t.kept.len() - start) as u64,
        )
    };
    let (out, out_dropped) = take(&out, keep_out);
    let (err, _) = take(&err, keep_err);
    Ok(Finished {
        ended,
        out,
        err,
        out_dropped,
    })
}

/// Runs `spec` with `TUNABLE_DEVICE=device`, killing it (and every process it started) after
/// `timeout`; calls `tick` about every `tick_every` while it runs. Answers the time in
/// milliseconds or why the evaluation failed.
pub fn run(
    spec: &ChildSpec,
    device: &str,
    timeout: Duration,
    tick_every: Duration,
    tick: impl FnMut(),
) -> Result<f64, String> {
    let mut command = Command::new(&spec.program);
    if let Some(dir) = &spec.dir {
        command.current_dir(dir);
    }
    command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env("TUNABLE_DEVICE", device);
    let finished = run_command(
        &mut command,
        spec.stdin.clone(),
        timeout,
        OUTPUT_KEPT,
        4 * STDERR_KEPT,
        tick_every,
        tick,
    )
    .map_err(|e| {
        format!(
            "cannot start the evaluation process {}: {e}",
            spec.program.to_string_lossy()
        )
    })?;
    match finished.ended {
        Ended::TimedOut => Err(format!(
            "timed out after {:.1} s (evaluation process and its process group killed)",
            timeout.as_secs_f64()
        )),
        Ended::Exited(status) => interpret(status, &finished.out, &finished.err).map_err(|e| {
            if finished.out_dropped > 0 {
                format!(
                    "{e} (it printed {} bytes; only the last {OUTPUT_KEPT} were read)",
                    finished.out_dropped + finished.out.len() as u64
                )
            } else {
                e
            }
        }),
    }
}

/// The result of a finished process: its answer, or why it gave none (a signal, an exit
/// status, no answer line), with the end of its standard error.
pub(crate) fn interpret(status: ExitStatus, out: &[u8], err: &[u8]) -> Result<f64, String> {
    let stderr_tail = tail(err, STDERR_KEPT);
    let with_stderr = |what: String| {
        if stderr_tail.is_empty() {
            what
        } else {
            format!("{what}: {stderr_tail}")
        }
    };
    if let Some(sig) = status.signal() {
        return Err(with_stderr(format!(
            "the evaluation process was killed by signal {sig}{}",
            signal_name(sig)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        )));
    }
    let text = String::from_utf8_lossy(out);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    match serde_json::from_str::<Answer>(last.trim()) {
        Ok(answer) => checked(answer.into_result()),
        Err(_) if !status.success() => Err(with_stderr(format!(
            "the evaluation process exited with status {}",
            status.code().unwrap_or(-1)
        ))),
        Err(_) => Err(with_stderr(format!(
            "the evaluation process printed no answer (last line: {:?})",
            truncate(last, 120)
        ))),
    }
}

/// Longest failure reason kept from an answer (a longer one is cut).
pub const REASON_KEPT: usize = 2000;

/// An answer made safe to record: a time that is finite and not negative (else a failure saying
/// so), a reason cut to [`REASON_KEPT`] characters.
pub fn checked(result: Result<f64, String>) -> Result<f64, String> {
    match result {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(t) => Err(format!(
            "the evaluation answered an invalid time ({t} ms): times must be finite and not negative"
        )),
        Err(reason) => Err(truncate(&reason, REASON_KEPT).to_owned()),
    }
}

/// The last `kept` bytes (at most) of a process's standard error, on one line.
pub(crate) fn tail(err: &[u8], kept: usize) -> String {
    let text = String::from_utf8_lossy(err);
    let joined = crate::error::one_line(&text);
    let start = joined.len().saturating_sub(kept);
    let start = (start..=joined.len())
        .find(|&i| joined.is_char_boundary(i))
        .unwrap_or(joined.len());
    joined[start..].to_owned()
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> ChildSpec {
        ChildSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            stdin: b"input".to_vec(),
            env: vec![("GREETING".into(), "hello".into())],
            dir: Some("/".into()),
        }
    }

    fn go(script: &str, timeout_ms: u64) -> Result<f64, String> {
        run(
            &sh(script),
            "3",
            Duration::from_millis(timeout_ms),
            Duration::from_millis(20),
            || {},
        )
    }

    #[test]
    fn answers_and_failures_are_results() {
        assert_eq!(go(r#"echo noise; echo '{"time_ms": 2.5}'"#, 5000), Ok(2.5));
        assert_eq!(
            go(r#"echo '{"failed": "wrong output"}'"#, 5000),
            Err("wrong output".to_owned())
        );
        // The device and the spec's variables are in the environment, the input on stdin, the
        // spec's folder is the working one.
        assert_eq!(
            go(
                r#"read x; [ "$x" = input ] && [ "$GREETING" = hello ] && [ "$PWD" = / ] && echo "{\"time_ms\": $TUNABLE_DEVICE}""#,
                5000
            ),
            Ok(3.0)
        );
    }

    #[test]
    fn a_crash_is_a_failure_with_its_reason() {
        let e = go("echo 'kernel exploded' >&2; kill -SEGV $$", 5000).unwrap_err();
        assert_eq!(
            e,
            "the evaluation process was killed by signal 11 (SIGSEGV): kernel exploded"
        );
        let e = go("exit 7", 5000).unwrap_err();
        assert_eq!(e, "the evaluation process exited with status 7");
        let e = go("echo hello", 5000).unwrap_err();
        assert!(
            e.contains("printed no answer") && e.contains("hello"),
            "{e}"
        );
        let e = run(
            &ChildSpec {
                program: "/nonexistent/harness".into(),
                args: vec![],
                stdin: vec![],
                env: vec![],
                dir: None,
            },
            "0",
            Duration::from_secs(1),
            Duration::from_millis(20),
            || {},
        )
        .unwrap_err();
        assert!(
            e.starts_with("cannot start the evaluation process /nonexistent/harness"),
            "{e}"
        );
    }

    #[test]
    fn a_hang_is_killed_at_the_timeout_and_ticks_run_meanwhile() {
        let mut ticks = 0;
        let start = Instant::now();
        let e = run(
            &sh("sleep 30"),
            "0",
            Duration::from_millis(300),
            Duration::from_millis(20),
            || ticks += 1,
        )
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(
            e,
            "timed out after 0.3 s (evaluation process and its process group killed)"
        );
        assert!(ticks >= 5, "{ticks}");
    }

    /// Whether process `pid` is gone (or a zombie nobody reaped: dead all the same).
    fn dead(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    fn scratch_file(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tunable-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_grandchild_holding_stdout_does_not_block_and_dies_with_the_evaluation() {
        let pidfile = scratch_file("grandchild");
        let script = format!(
            r#"sleep 1000 & echo $! > {}; echo '{{"time_ms": 1.5}}'"#,
            pidfile.display()
        );
        // The worker does not wait for the grandchild's end of standard output (it would wait
        // forever): the evaluation ends with the child, and the grandchild is killed.
        assert_eq!(go(&script, 60_000), Ok(1.5));
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(dead(&pid), "the grandchild {pid} outlived the evaluation");
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let pidfile = scratch_file("orphan");
        let script = format!("sleep 1000 & echo $! > {}; sleep 1000", pidfile.display());
        let e = go(&script, 300).unwrap_err();
        assert!(e.starts_with("timed out after 0.3 s"), "{e}");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        assert!(dead(&pid), "the child's child {pid} survived the time-out");
    }

    #[test]
    fn output_is_read_with_a_cap() {
        // 32 MB of noise, then the answer: found, with 64 KiB kept.
        assert_eq!(
            go(
                r#"head -c 32000000 /dev/zero | tr '\0' x; echo; echo '{"time_ms": 2}'"#,
                60_000
            ),
            Ok(2.0)
        );
        // An answer line longer than the cap is no answer, and says so.
        let e = go(
            r#"printf '{"failed": "'; head -c 1000000 /dev/zero | tr '\0' x; echo '"}'"#,
            60_000,
        )
        .unwrap_err();
        assert!(
            e.contains("printed no answer") && e.contains("only the last 65536 were read"),
            "{}",
            &e[..e.len().min(300)]
        );
        // A long failure reason is cut.
        let e = go(
            r#"printf '{"failed": "'; head -c 30000 /dev/zero | tr '\0' x; echo '"}'"#,
            60_000,
        )
        .unwrap_err();
        assert_eq!(e.len(), REASON_KEPT);
    }

    /// A 1.5 GB answer is read with a cap, so the worker's memory does not grow to the answer's
    /// size (ignored for its cost; run it with `--ignored` under `/usr/bin/time -v` to see the
    /// peak memory).
    #[test]
    #[ignore = "a measurement: 1.5 GB through a pipe"]
    fn a_huge_output_is_read_with_a_cap() {
        assert_eq!(
            go(
                r#"head -c 1500000000 /dev/zero | tr '\0' x; echo; echo '{"time_ms": 2}'"#,
                600_000
            ),
            Ok(2.0)
        );
    }

    #[test]
    fn invalid_times_are_failures() {
        // A negative time is a failure, or it would be exported as the winner.
        let e = go(r#"echo '{"time_ms": -1000}'"#, 5000).unwrap_err();
        assert!(e.contains("invalid time (-1000 ms)"), "{e}");
        // Out of range for a double: not an answer.
        assert!(go(r#"echo '{"time_ms": 1e400}'"#, 5000).is_err());
        assert!(checked(Ok(f64::NAN)).is_err());
        assert!(checked(Ok(-0.5)).is_err());
        assert_eq!(checked(Ok(0.0)), Ok(0.0));
    }

    /// Run in a process of its own with credentials in its environment (see the next test).
    #[test]
    fn scrub_probe() {
        if std::env::var_os("TUNABLE_TEST_SCRUB_PROBE").is_none() {
            return;
        }
        let e = go(
            r#"echo "{\"failed\": \"[$PGPASSWORD|$PGUSER|$DATABASE_URL|$TUNABLE_DB|$KEEP]\"}""#,
            5000,
        )
        .unwrap_err();
        assert_eq!(e, "[||||kept]");
        println!("scrub probe ran");
    }

    #[test]
    fn children_get_no_database_credentials() {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child::tests::scrub_probe", "--nocapture"])
            .env("TUNABLE_TEST_SCRUB_PROBE", "1")
            .env("PGPASSWORD", "s3cret")
            .env("PGUSER", "tuner")
            .env("DATABASE_URL", "postgres://u:p@h/d")
            .env("TUNABLE_DB", "host=h")
            .env("KEEP", "kept")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("scrub probe ran"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
