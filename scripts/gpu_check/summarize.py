"""Summarizes one run of `scripts/gpu-check run`: reads its work folder and writes
`summary.json` and `summary.md` into the output folder, and prints the Markdown (the device
tool's reply ends with it). Exit status 0 when every step and every test passed, 1 otherwise.

    python3 scripts/gpu_check/summarize.py /tmp/gpu-check "$OUT" --sizes 2048 4096

What each part reads (all written by `scripts/gpu-check run` into the work folder W):
- W/steps.tsv: one line per step (name, status, exit code, seconds, note);
- W/test-*.log: the test executables' output ("test result:" lines, "skipping:" lines);
- W/tune-N.json, W/serial-N.json: what `gemm_cuda --json` wrote; W/tune-N.log: its output, with
  the tuning summary line on stderr ("tunable: tuned gemm_cuda (key N) ..."); W/tune-N/: the
  tuned file and the journal (Kernel Tuner cache, evaluation order);
- W/shipped-{embedded,compiled}-I.json: the shipped binary's first call;
- W/faults.log and W/faults/: the planted failures' tuning and journal;
- W/cublas.json, W/kt.json: the two Python drivers.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from journal import best_after, cache_times  # noqa: E402

SUMMARY = re.compile(
    r"tunable: tuned (?P<kernel>\S+) \(key (?P<key>\d+)\) on (?P<device>.*?): default (?P<default>.*?)"
    r"(?: -> tuned (?P<tuned>[\d.]+) ms(?: \((?P<speedup>[\d.]+)x\))? \[(?P<config>[^\]]*)\])?"
    r"(?: -> every configuration failed, keeping the default)?"
    r"; (?P<evaluations>\d+) evaluations \((?P<measured>\d+) measured, (?P<failed>\d+) failed, "
    r"(?P<early>\d+) stopped early\) in (?P<seconds>[\d.]+) s: compile (?P<compile>[\d.]+) s, "
    r"measure (?P<measure>[\d.]+) s, strategy (?P<strategy>[\d.]+) s, other (?P<other>[\d.]+) s"
)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def steps(w):
    out = []
    for line in read_text(os.path.join(w, "steps.tsv")).splitlines():
        parts = line.split("\t") + [""] * 5
        out.append({"name": parts[0], "status": parts[1], "exit": parts[2],
                    "seconds": float(parts[3] or 0), "note": parts[4]})
    return out


def tests(w):
    out = {}
    for log in sorted(glob.glob(os.path.join(w, "test-*.log"))):
        name = os.path.basename(log)[len("test-"):-len(".log")]
        text = read_text(log)
        counts = {"passed": 0, "failed": 0, "ignored": 0}
        for m in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", text):
            counts["passed"] += int(m.group(1))
            counts["failed"] += int(m.group(2))
            counts["ignored"] += int(m.group(3))
        counts["skips"] = [line for line in text.splitlines() if line.startswith("skipping:")]
        counts["failures"] = re.findall(r"^test (\S+) \.\.\. FAILED", text, re.M)
        counts["nvrtc"] = sorted(set(re.findall(r"^(NVRTC \d+\.\d+ \(.*\))$", text, re.M)))
        out[name] = counts
    return out


def tuning(w, name):
    """One gemm_cuda tuning run (tune-N or serial-N)."""
    run = {"example": read_json(os.path.join(w, f"{name}.json"))}
    m = SUMMARY.search(read_text(os.path.join(w, f"{name}.log")))
    if m:
        d = m.groupdict()
        run["summary"] = {k: (float(v) if k not in ("kernel", "device", "config", "default") and v
                              else v) for k, v in d.items()}
        dm = re.match(r"([\d.]+) ms", d["default"] or "")
        run["summary"]["default_ms"] = float(dm.group(1)) if dm else None
    journals = glob.glob(os.path.join(w, name, "*.cache.json"))
    if journals:
        times, _ = cache_times(max(journals, key=os.path.getsize))
        run["journal"] = {"evaluations": len(times),
                          "failed": sum(t is None for t in times),
                          "best_after": best_after(times)}
    return run


def shipped(w):
    out = {}
    for way in ("embedded", "compiled"):
        runs = [read_json(p) for p in sorted(glob.glob(os.path.join(w, f"shipped-{way}-*.json")))]
        runs = [r for r in runs if r]
        first = [r["first_call_ms"] for r in runs if r.get("first_call_ms") is not None]
        out[way] = {
            "runs": len(runs),
            "first_call_ms_median": statistics.median(first) if first else None,
            "first_call_ms": first,
            "tuned_ms": [r.get("tuned_ms") for r in runs],
            "origin": sorted({r.get("origin", "?") for r in runs}),
            "provenance": sorted({r.get("provenance", "?") for r in runs}),
            "config": sorted({r.get("config", "?") for r in runs}),
            "nvrtc_loaded": sorted({r.get("nvrtc_loaded_by_first_call") for r in runs}, key=str),
            "device": sorted({r.get("device", "?") for r in runs}),
        }
    return out


FAULTS = {
    "1": ("wrong output", "wrong output"),
    "2": ("launch beyond the kernel's threads per block (__launch_bounds__(64))", "exceeds this kernel's maximum"),
    "4": ("spins past TUNABLE_TIMEOUT", "timed out"),
    "5": ("300 KiB of dynamic shared memory", "shared memory"),
}


def faults(w):
    out = {"stdout": [l for l in read_text(os.path.join(w, "faults.log")).splitlines()
                      if l.startswith(("chosen", "correct", "device"))]}
    journals = glob.glob(os.path.join(w, "faults", "*.cache.json"))
    if not journals:
        out["error"] = "no journal"
        return out
    times, entries = cache_times(journals[0])
    by_fault = {}
    for t, e in zip(times, entries):
        f = str(e.get("FAULT"))
        by_fault.setdefault(f, []).append({"block": e.get("block"), "time": t,
                                           "reason": e.get("reason"), "runs": len(e.get("times") or [])})
    out["by_fault"] = by_fault
    checks = {}
    for f, (what, needle) in FAULTS.items():
        rows = by_fault.get(f, [])
        ok = bool(rows) and all(r["time"] is None and needle in (r["reason"] or "") for r in rows)
        checks[f] = {"variant": what, "expected": f"failed: {needle}", "ok": ok,
                     "reasons": sorted({(r["reason"] or "")[:200] for r in rows})}
    normal = [r["time"] for r in by_fault.get("0", []) if r["time"] is not None]
    slow = by_fault.get("3", [])
    ratio = None
    if normal and slow and all(r["time"] is not None for r in slow):
        ratio = min(r["time"] for r in slow) / min(normal)
    checks["3"] = {"variant": "20x the work", "expected": "measured far behind (or stopped early), not chosen",
                   "ok": ratio is not None and ratio > 5 and "FAULT: 3" not in " ".join(out["stdout"]),
                   "slowdown": ratio, "runs": [r["runs"] for r in slow]}
    out["checks"] = checks
    out["ok"] = all(c["ok"] for c in checks.values()) and "correct true" in out["stdout"]
    return out


def verdicts(s, sizes):
    """What must hold for the check to pass, each with whether it did."""
    out = {}

    def check(name, ok, what):
        out[name] = {"ok": bool(ok), "what": what}

    check("steps", s["steps"] and all(x["status"] == "passed" for x in s["steps"]),
          "every step ran to the end and exited with status 0")
    check("tests", s["tests"] and all(t["failed"] == 0 and t["passed"] > 0 and not t["skips"]
                                      for t in s["tests"].values()),
          "every CUDA test executable ran tests, none failed, none skipped")
    first = sizes[0]
    names = [f"tune-{n}" for n in sizes] + [f"serial-{first}"]
    check("tuning", all((s["tuning"].get(n) or {}).get("summary") for n in names),
          "each tuning printed its summary (" + ", ".join(names) + ")")
    e, c = s["shipped"]["embedded"], s["shipped"]["compiled"]
    check("shipped", e["runs"] and e["provenance"] == ["embedded binary"] and e["nvrtc_loaded"] == [False]
          and c["runs"] and c["provenance"] == ["compiled"],
          "the shipped binary ran its configuration from the embedded binary without loading NVRTC, "
          "and compiled it with TUNABLE_EMBEDDED=off")
    check("faults", s["faults"].get("ok"), "every planted failure was recorded for its reason; a correct variant won")
    check("cublas", (s["cublas"] or {}).get("sizes") and not (s["cublas"] or {}).get("error"),
          "cuBLAS was timed at every size")
    check("kernel_tuner", (s["kernel_tuner"] or {}).get("best_after") and not (s["kernel_tuner"] or {}).get("error"),
          "Kernel Tuner tuned the same space")
    return out


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def markdown(s, sizes):
    lines = ["# GPU check", ""]
    lines += ["```text", s["machine"].strip(), "```", ""]
    lines += ["## Steps", "", "| step | status | s | note |", "| --- | --- | --- | --- |"]
    lines += [f"| {x['name']} | {x['status']} | {x['seconds']:.1f} | {x['note']} |" for x in s["steps"]]
    lines += ["", "## CUDA tests (TUNABLE_REQUIRE=\"cuda nvrtc\")", "",
              "| executable | passed | failed | ignored | skips | NVRTC |", "| --- | --- | --- | --- | --- | --- |"]
    for name, t in s["tests"].items():
        lines.append(f"| {name} | {t['passed']} | {t['failed']} | {t['ignored']} | {len(t['skips'])} | {'; '.join(t['nvrtc'])} |")
    lines += ["", "## gemm_cuda tuned from scratch", "",
              "| run | default ms | tuned ms | speedup | evaluations (measured, failed, early) | wall s | compile s | measure s | strategy s | other s | configuration |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in s["tuning"].items():
        m = r.get("summary")
        if not m:
            lines.append(f"| {name} | no summary line | | | | | | | | | |")
            continue
        lines.append(
            f"| {name} | {fmt(m['default_ms'])} | {fmt(m['tuned'])} | {fmt(m['speedup'], '.2f')} | "
            f"{m['evaluations']:.0f} ({m['measured']:.0f}, {m['failed']:.0f}, {m['early']:.0f}) | "
            f"{m['seconds']:.1f} | {m['compile']:.1f} | {m['measure']:.1f} | {m['strategy']:.1f} | {m['other']:.1f} | {m['config']} |")
    lines += ["", "## Tuned against cuBLAS (SGEMM through CuPy, float32, TF32 off)", "",
              "| n | tuned ms (call after tuning) | cuBLAS ms | tuned / cuBLAS | tuned TFLOP/s | cuBLAS TFLOP/s |",
              "| --- | --- | --- | --- | --- | --- |"]
    for n in sizes:
        ex = (s["tuning"].get(f"tune-{n}") or {}).get("example") or {}
        cb = (s["cublas"] or {}).get("sizes", {}).get(str(n), {})
        t, c = ex.get("tuned_ms"), cb.get("ms")
        tf = lambda ms: None if not ms else 2.0 * n**3 / (ms * 1e-3) / 1e12  # noqa: E731
        lines.append(f"| {n} | {fmt(t)} | {fmt(c)} | {fmt(t / c if t and c else None, '.2f')} | {fmt(tf(t), '.1f')} | {fmt(tf(c), '.1f')} |")
    if s["cublas"] and s["cublas"].get("error"):
        lines.append(f"\ncuBLAS: {s['cublas']['error']}")
    first = str(sizes[0])
    kt = s["kernel_tuner"] or {}
    ours = (s["tuning"].get(f"tune-{first}") or {})
    lines += ["", f"## Against Kernel Tuner (n = {first}, same kernel, space and budget)", "",
              "| | best after 25 | after 50 | after 100 | evaluations | failed | wall s |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    oj, om = ours.get("journal") or {}, ours.get("summary") or {}
    ob = oj.get("best_after", {})
    lines.append(f"| tunable | {fmt(ob.get('25'))} | {fmt(ob.get('50'))} | {fmt(ob.get('100'))} | "
                 f"{oj.get('evaluations', '-')} | {oj.get('failed', '-')} | {fmt(om.get('seconds'), '.1f')} |")
    kb = kt.get("best_after", {})
    lines.append(f"| Kernel Tuner {kt.get('kernel_tuner', '')} ({kt.get('strategy', '')}) | {fmt(kb.get('25'))} | "
                 f"{fmt(kb.get('50'))} | {fmt(kb.get('100'))} | {kt.get('evaluations', '-')} | {kt.get('failed', '-')} | "
                 f"{fmt(kt.get('seconds'), '.1f')} |")
    if kt.get("error"):
        lines.append(f"\nKernel Tuner: {kt['error']}")
    serial = (s["tuning"].get(f"serial-{first}") or {}).get("summary") or {}
    lines += ["", f"## Compile-ahead pool against one at a time (n = {first})", "",
              "| | wall s | compile s | measure s | evaluations | tuned ms |", "| --- | --- | --- | --- | --- | --- |"]
    for label, m in (("pool (all cores)", om), ("one at a time (TUNABLE_BATCH=1)", serial)):
        lines.append(f"| {label} | {fmt(m.get('seconds'), '.1f')} | {fmt(m.get('compile'), '.1f')} | "
                     f"{fmt(m.get('measure'), '.1f')} | {fmt(m.get('evaluations'), '.0f')} | {fmt(m.get('tuned'))} |")
    sh = s["shipped"]
    lines += ["", f"## Shipped binary, first call (n = {first})", "",
              "| way | first call ms (median) | runs | origin | module | NVRTC loaded | configuration |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for way, label in (("embedded", "embedded CUBIN, TUNABLE_NVRTC=off"), ("compiled", "TUNABLE_EMBEDDED=off (NVRTC)")):
        x = sh[way]
        lines.append(f"| {label} | {fmt(x['first_call_ms_median'], '.1f')} | {x['runs']} | {', '.join(x['origin'])} | "
                     f"{', '.join(x['provenance'])} | {', '.join(map(str, x['nvrtc_loaded']))} | {', '.join(x['config'])} |")
    f = s["faults"]
    lines += ["", "## Planted failures (examples/cuda_faults.rs)", "", " ".join(f.get("stdout", [])), "",
              "| FAULT | variant | expected | ok | recorded |", "| --- | --- | --- | --- | --- |"]
    for k, c in sorted((f.get("checks") or {}).items()):
        rec = "; ".join(c.get("reasons", [])) if "reasons" in c else f"slowdown {fmt(c.get('slowdown'), '.1f')}x, runs {c.get('runs')}"
        lines.append(f"| {k} | {c['variant']} | {c['expected']} | {c['ok']} | {rec.replace('|', '/')} |")
    lines += ["", "## Verdict", "", "| check | ok | what |", "| --- | --- | --- |"]
    lines += [f"| {k} | {v['ok']} | {v['what']} |" for k, v in s["verdicts"].items()]
    lines += ["", f"**Overall: {'PASS' if s['ok'] else 'FAIL'}**", ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096])
    args = ap.parse_args()
    w = args.work
    s = {
        "gpu": True,
        "machine": read_text(os.path.join(w, "machine.txt")),
        "steps": steps(w),
        "tests": tests(w),
        "tuning": {},
        "cublas": read_json(os.path.join(w, "cublas.json")),
        "kernel_tuner": read_json(os.path.join(w, "kt.json")),
        "shipped": shipped(w),
        "faults": faults(w),
    }
    for n in args.sizes:
        for name in (f"tune-{n}", f"serial-{n}"):
            if os.path.exists(os.path.join(w, f"{name}.log")):
                s["tuning"][name] = tuning(w, name)
    s["verdicts"] = verdicts(s, args.sizes)
    s["ok"] = all(v["ok"] for v in s["verdicts"].values())
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    md = markdown(s, args.sizes)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if s["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
