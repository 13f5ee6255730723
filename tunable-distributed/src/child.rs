//! # Evaluation in a child process
//!
//! [`run`] starts the process an [`Evaluator`](crate::Evaluator) asked for, feeds it its input,
//! and waits for it under a time-out, calling back regularly so the worker can renew its lease.
//! Whatever the process does, the worker gets a result: the [`Answer`] it printed, or the reason
//! it gave none (killed by a signal, exited with an error, timed out, printed no answer). A
//! crashing or hanging kernel therefore costs one evaluation, never the worker.

use crate::evaluator::{Answer, ChildSpec};
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// At most this much of a child's standard error is kept for the failure's reason.
const STDERR_KEPT: usize = 400;

/// Runs `spec` with `TUNABLE_DEVICE=device`, killing it after `timeout`; calls `tick` about every
/// `tick_every` while it runs. Answers the time in milliseconds or why the evaluation failed.
pub fn run(
    spec: &ChildSpec,
    device: &str,
    timeout: Duration,
    tick_every: Duration,
    mut tick: impl FnMut(),
) -> Result<f64, String> {
    let mut command = Command::new(&spec.program);
    if let Some(dir) = &spec.dir {
        command.current_dir(dir);
    }
    let mut child = command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env("TUNABLE_DEVICE", device)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start the evaluation process {}: {e}",
                spec.program.to_string_lossy()
            )
        })?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = spec.stdin.clone();
    // A child that never reads its input must not block us: write from a thread.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (done_tx, done_rx) = mpsc::channel();
    let out_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = done_tx.send(());
        out
    });
    let err_reader = std::thread::spawn(move || {
        let mut err = Vec::new();
        let _ = stderr.read_to_end(&mut err);
        err
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("cannot wait for the evaluation process: {e}"))?
        {
            break status;
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "timed out after {:.1} s (evaluation process killed)",
                timeout.as_secs_f64()
            ));
        }
        // Standard output closing means the process is (about to be) gone: look again at once.
        if done_rx.recv_timeout(left.min(tick_every)).is_ok() {
            let status = child
                .wait()
                .map_err(|e| format!("cannot wait for the evaluation process: {e}"))?;
            break status;
        }
        tick();
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    interpret(status, &out, &err)
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
        Ok(answer) => answer.into_result(),
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
        assert_eq!(e, "timed out after 0.3 s (evaluation process killed)");
        assert!(ticks >= 5, "{ticks}");
    }
}
