"""Summarizes one run of `scripts/gpu-check run`: reads its work folder and writes
`summary.json` and `summary.md` into the output folder, and prints the Markdown (the device
tool's reply ends with it). Exit status 0 when every step and every test passed, 1 otherwise.

    python3 scripts/gpu_check/summarize.py /tmp/gpu-check "$OUT" --sizes 2048 4096

What each part reads (all written by `scripts/gpu-check run` into the work folder W):
- W/steps.tsv: one line per step (name, status, exit code, seconds, note);
- W/test-*.log: the test executables' output ("test result:" lines, "skipping:" lines);
- W/tune-N.json, W/serial-N.json, W/batch16-N.json, W/exhaustive-N.json,
  W/cache-cold-N.json, W/cached-N.json: what `gemm_cuda --json`
  wrote; W/<run>.log: its output, with the tuning summary line on stderr ("tunable: tuned
  gemm_cuda (key N) ...") and, with TUNABLE_LOG=1, one line per evaluation; W/<run>/: the tuned
  file and the journal (Kernel Tuner cache, evaluation order);
- W/wgpu-vector_add.log, W/wgpu-matmul.log: the wgpu examples' output on the NVIDIA Vulkan driver;
- W/shipped-{embedded,compiled}-I.json: the shipped binary's first call;
- W/faults.log and W/faults/: the planted failures' tuning and journal;
- W/cublas.json, W/kt.json: the two Python drivers;
- W/energy-N.json: `gemm_cuda --energy`, NVML's energy and power of the default and the tuned
  configuration, read-only, with the counter's resolution.
"""

import argparse
import glob
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from journal import best_after, cache_times  # noqa: E402

SUMMARY = re.compile(
    r"tunable: tuned (?P<kernel>\S+) \(key (?P<key>\d+)\) on (?P<device>.*?): default (?P<default>.*?)"
    r"(?: -> tuned (?P<tuned>[\d.]+) ms(?: \((?P<speedup>[\d.]+)x\))? \[(?P<config>[^\]]*)\])?"
    r"(?: -> every configuration failed, keeping the default)?"
    r"; (?P<evaluations>\d+) evaluations \((?P<measured>\d+) measured, (?P<failed>\d+) failed, "
    r"(?P<early>\d+) stopped early\) in (?P<seconds>[\d.]+) s: (?P<spent>[^;]*)"
)
# One part of the summary's breakdown of the wall time ("compile 8.4 s, measure 4.1 s, ..."),
# whatever its name: the tuner may add parts (the kernels' own time, say).
PART = re.compile(r"([A-Za-z][\w' ]*?) ([\d.]+) s\b")
# What the breakdown must hold: the summary's columns.
PARTS = ("compile", "measure", "strategy", "other")
# The kernels' own time and the measurement's overhead, after the rate (where the tuner gives them).
KERNELS = re.compile(r"/min; kernels (?P<kernels>[\d.]+) s, overhead (?P<overhead>[\d.]+) s "
                     r"\((?P<overhead_per_config>[\d.]+) ms per configuration\)")
# One evaluation as TUNABLE_LOG prints it, with what measuring it cost where the tuner says so.
EVALUATION = re.compile(
    r"^tunable: (?P<kernel>\S+) \(key \d+\) \[[^\]]*\] (?P<ms>[\d.]+) ms"
    r"(?: \(stopped early after (?P<runs>\d+) runs?\))?"
    r"(?:; measured in (?P<measure_ms>[\d.]+) ms, kernels (?P<kernel_ms>[\d.]+) ms"
    r"(?:, output checked in (?P<check_ms>[\d.]+) ms)?)?$", re.M)
SPACE = re.compile(r"^\S+ n = \d+: (\d+) valid configurations", re.M)


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


def summary_line(text):
    """The tuner's summary line in `text`, its figures as numbers, or None. `breakdown` holds
    every part of the wall time's breakdown by name; `compile`, `measure`, `strategy` and
    `other` are also keys of their own (None where missing), and `kernels` the kernels' own
    time where the summary gives it (after the rate: "kernels 0.512 s, overhead 3.288 s (32.9 ms
    per configuration)", or a part of the breakdown whose name has "kernel" in it)."""
    m = SUMMARY.search(text)
    if not m:
        return None
    tail = text[m.end():].split("\n", 1)[0]
    d = m.groupdict()
    spent = d.pop("spent")
    out = {k: (float(v) if k not in ("kernel", "device", "config", "default") and v else v)
           for k, v in d.items()}
    dm = re.match(r"([\d.]+) ms", d["default"] or "")
    out["default_ms"] = float(dm.group(1)) if dm else None
    out["breakdown"] = {name.strip(): float(v) for name, v in PART.findall(spent)}
    for part in PARTS:
        out[part] = out["breakdown"].get(part)
    out["kernels"] = next((v for k, v in out["breakdown"].items() if "kernel" in k), None)
    out["overhead"] = out["overhead_per_config"] = None
    k = KERNELS.search(tail)
    if k:
        out.update({key: float(v) for key, v in k.groupdict().items()})
    return out


def logged_kernel_time(text, kernel, repeats):
    """The kernels' own run time (s) summed from TUNABLE_LOG's evaluation lines of `kernel`:
    each line's own figure where the tuner prints one ("measured in 36.2 ms, kernels 7.6 ms"),
    else estimated: the evaluation's time times its runs, the timed ones (`repeats`, or as many
    as it got before it was stopped early) plus one untimed (the checked or warm-up run), the
    time being each configuration's robust median. `exact` says which. None without lines."""
    found = [e for e in EVALUATION.finditer(text) if e.group("kernel") == kernel]
    if not found:
        return None
    if all(e.group("kernel_ms") for e in found):
        return {"seconds": sum(float(e.group("kernel_ms")) for e in found) / 1e3,
                "measure_seconds": sum(float(e.group("measure_ms")) for e in found) / 1e3,
                "check_seconds": sum(float(e.group("check_ms") or 0) for e in found) / 1e3,
                "evaluations": len(found), "exact": True}
    runs = lambda e: int(e.group("runs")) if e.group("runs") else repeats  # noqa: E731
    return {"seconds": sum(float(e.group("ms")) * (runs(e) + 1) for e in found) / 1e3,
            "evaluations": len(found), "exact": False}


def attribute_repeats(path, default=7):
    """The `repeats` of a `#[tunable]` attribute in the Rust file at `path`."""
    m = re.search(r"^\s*repeats\s*=\s*(\d+)", read_text(path), re.M)
    return int(m.group(1)) if m else default


def tuning(w, name, repeats=5):
    """One gemm_cuda tuning run (tune-N, serial-N, batch16-N or exhaustive-N)."""
    run = {"example": read_json(os.path.join(w, f"{name}.json"))}
    text = read_text(os.path.join(w, f"{name}.log"))
    summary = summary_line(text)
    if summary:
        run["summary"] = summary
        logged = logged_kernel_time(text, summary["kernel"], repeats)
        if summary["kernels"] is not None:
            run["kernels"] = {"seconds": summary["kernels"], "source": "the tuner's summary"}
        elif logged:
            how = "summed from TUNABLE_LOG" if logged["exact"] else "estimated from TUNABLE_LOG"
            run["kernels"] = {"seconds": logged["seconds"], "source": how,
                              "evaluations": logged["evaluations"]}
        if logged and logged.get("check_seconds"):
            run["check"] = {"seconds": logged["check_seconds"], "evaluations": logged["evaluations"]}
        sp = SPACE.search(text)
        run["space"] = int(sp.group(1)) if sp else None
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


def wgpu(w):
    """The wgpu examples on the NVIDIA Vulkan driver: the device wgpu opened, the tuner's
    summary, and the example's default and tuned times (timed alike, interleaved)."""
    out = {}
    for name in ("vector_add", "matmul"):
        text = read_text(os.path.join(w, f"wgpu-{name}.log"))
        if not text:
            continue
        dev = re.search(r"^device: (.*)$", text, re.M)
        default = re.search(r"^  default .*?: ([\d.]+) ms", text, re.M)
        tuned = re.search(r"^  tuned .*?: ([\d.]+) ms.*speedup ([\d.]+)x", text, re.M)
        out[name] = {
            "device": dev.group(1) if dev else None,
            "summary": summary_line(text),
            "default_ms": float(default.group(1)) if default else None,
            "tuned_ms": float(tuned.group(1)) if tuned else None,
            "speedup": float(tuned.group(2)) if tuned else None,
            "alike": "both timed alike" in text,
        }
    return out


def cubecl(w):
    """The CubeCL example on the NVIDIA Vulkan driver: the device, and the default, tuned and
    TunableSet rows of its side-by-side table (ms, speedup over the default, time to answer)."""
    text = read_text(os.path.join(w, "cubecl-matmul.log"))
    if not text:
        return None
    dev = re.search(r"^device: (.*)$", text, re.M)
    rows = {}
    for key, label in (("default", "default"), ("tuned", r"#\[tunable\], whole space"),
                       ("set", "CubeCL TunableSet, 10 picked")):
        m = re.search(rf"^  {label}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+(.*)$", text, re.M)
        if m:
            rows[key] = {"ms": float(m.group(1)), "speedup": float(m.group(3)), "took": m.group(4).strip()}
    return {"device": dev.group(1) if dev else None, "rows": rows,
            "verified": "result matches the CPU reference" in text}


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


def nvrtc_processes(w):
    """NVRTC's figures of step 7b: the seconds `gemm_cuda --ptx` reported in one process alone
    (nvrtc-one), in each of two at once (nvrtc-two) and in one without NVRTC's -minimal
    (nvrtc-full), with the configurations compiled."""
    line = re.compile(r"NVRTC \((\S+)\): (\d+) of (\d+) configurations compiled to PTX in ([\d.]+) s")
    out = {}
    for name in ("nvrtc-one", "nvrtc-two", "nvrtc-full"):
        found = line.findall(read_text(os.path.join(w, f"{name}.log")))
        if found:
            out[name] = {"arch": found[0][0], "compiled": [int(f[1]) for f in found],
                         "of": [int(f[2]) for f in found], "seconds": [float(f[3]) for f in found]}
    return out


def pool_ways(w, name="pool"):
    """The compile pool's ways of step 7c (`gemm_cuda --pool`, the log `name`): per way, its
    rounds' wall seconds and seconds spent waiting for NVRTC, in the order the log gives them."""
    line = re.compile(r"^\s+round \d+,\s+(\S+): ([\d.]+) s, ([\d.]+) s of it waiting", re.M)
    out = {}
    for way, wall, waited in line.findall(read_text(os.path.join(w, f"{name}.log"))):
        x = out.setdefault(way, {"wall": [], "waited": []})
        x["wall"].append(float(wall))
        x["waited"].append(float(waited))
    return out


def energy(w, sizes):
    """The energy step's figures per size (its --json file): the meter and its resolution, then
    for the default and the tuned configuration their time (the metered runs' median), energy
    per run with its uncertainty, mean power, runs and graphics clock read; `error` where NVML
    could not read. None when the step did not run."""
    out = {}
    for n in sizes:
        r = read_json(os.path.join(w, f"energy-{n}.json"))
        if r is None:
            continue
        row = {"meter": r.get("energy_meter"), "quantum_j": r.get("energy_quantum_j"),
               "update_ms": r.get("energy_update_ms"), "accuracy": r.get("energy_accuracy"),
               "error": r.get("energy_error"), "origin": r.get("origin"), "config": r.get("config")}
        for who in ("default", "tuned"):
            row[who] = {"ms": r.get(f"{who}_ms_metered"), "joules": r.get(f"{who}_energy_j"),
                        "uncertainty_j": r.get(f"{who}_energy_uncertainty_j"),
                        "watts": r.get(f"{who}_power_w"), "runs": r.get(f"{who}_energy_runs"),
                        "core_mhz": r.get(f"{who}_core_mhz")}
        d, t = row["default"]["joules"], row["tuned"]["joules"]
        row["energy_ratio"] = d / t if d and t else None
        out[str(n)] = row
    return out or None


NON_SQUARE = ("4096x128x4096", "128x4096x8192")


def sgemm(w):
    """The sgemm_cuda step's figures (its --json file): per shape, cuBLAS, the default and the
    tuned configuration timed alike, in ms, TFLOP/s and as speed relative to cuBLAS (cuBLAS's
    time over the kernel's), with the goals of issue 56 judged."""
    r = read_json(os.path.join(w, "sgemm.json"))
    if not r:
        return None
    shapes = {x["shape"]: x for x in r.get("shapes", []) if "shape" in x}
    ratio = lambda name: (shapes.get(name) or {}).get("tuned_vs_cublas")  # noqa: E731
    square = [ratio(n) for n in ("2048", "4096")]
    other = [ratio(n) for n in NON_SQUARE]
    r["goals"] = {
        "square_0.9": None if None in square else all(x >= 0.9 for x in square),
        "non_square_1.0": None if all(x is None for x in other) else any(x is not None and x >= 1.0 for x in other),
    }
    return r


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
    names = [f"tune-{n}" for n in sizes] + [f"serial-{first}", f"batch16-{first}", f"exhaustive-{first}"]
    check("tuning", all((s["tuning"].get(n) or {}).get("summary") for n in names),
          "each tuning printed its summary (" + ", ".join(names) + ")")
    g = s.get("wgpu") or {}
    check("wgpu", len(g) == 2 and all("NVIDIA" in (x["device"] or "") and x["summary"] and x["speedup"]
                                      and x["alike"] for x in g.values()),
          "both wgpu examples tuned on the NVIDIA Vulkan driver and timed the default and the tuned "
          "configuration alike")
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
    e = s.get("energy") or {}
    check("energy", len(e) == len(sizes) and all(
        not x.get("error") and all((x[w].get("joules") or 0) > 0 and (x[w].get("watts") or 0) > 0
                                   for w in ("default", "tuned")) for x in e.values()),
          "NVML read the energy and power of the default and the tuned configuration at every size "
          "(read-only)")
    g = s.get("sgemm") or {}
    measured = [x for x in g.get("shapes", []) if x.get("tuned_vs_cublas") is not None and not x.get("error")]
    check("sgemm", g and not g.get("error") and len(measured) == len(g.get("shapes", [])) > 0,
          "sgemm_cuda tuned every shape and timed cuBLAS, the default and the tuned kernel alike")
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
    lines += ["", "## gemm_cuda tuned from scratch: where the time goes", "",
              "The kernels' own time is every run of every evaluated configuration (timed runs and the "
              "untimed checked or warm-up run): from the tuner's summary where it gives it, else from "
              "TUNABLE_LOG's lines, estimated (marked ~) where they do not give it either. The overhead is "
              "what measuring a configuration costs beyond its kernels' runs.", "",
              "| run | default ms | tuned ms | speedup | evaluations (measured, failed, early) | wall s | compile s "
              "| measure s | strategy s | other s | kernels s | measure ms per configuration | overhead ms per "
              "configuration | configuration |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in s["tuning"].items():
        m = r.get("summary")
        if not m:
            lines.append(f"| {name} | no summary line | | | | | | | | | | | | |")
            continue
        k = r.get("kernels") or {}
        kern = "-" if not k else ("~" if k["source"].startswith("estimated") else "") + fmt(k["seconds"], ".2f")
        per = m["measure"] * 1e3 / m["measured"] if m.get("measure") is not None and m["measured"] else None
        over = m.get("overhead_per_config")
        if over is None and k and per is not None:
            over = per - k["seconds"] * 1e3 / m["measured"]
        lines.append(
            f"| {name} | {fmt(m['default_ms'])} | {fmt(m['tuned'])} | {fmt(m['speedup'], '.2f')} | "
            f"{m['evaluations']:.0f} ({m['measured']:.0f}, {m['failed']:.0f}, {m['early']:.0f}) | "
            f"{fmt(m['seconds'], '.1f')} | {fmt(m['compile'], '.1f')} | {fmt(m['measure'], '.1f')} | "
            f"{fmt(m['strategy'], '.2f')} | {fmt(m['other'], '.1f')} | {kern} | {fmt(per, '.1f')} | "
            f"{fmt(over, '.1f')} | {m['config']} |")
    checks = [f"{name} {r['check']['seconds'] * 1e3 / r['check']['evaluations']:.1f}"
              for name, r in s["tuning"].items() if r.get("check")]
    if checks:
        lines.append("\nOf the measurement, reading each configuration's output back and comparing it "
                     "(`verify`, TUNABLE_LOG's lines), ms per configuration: " + ", ".join(checks) + ".")
    extra = sorted({p for r in s["tuning"].values() for p in ((r.get("summary") or {}).get("breakdown") or {})
                    if p not in PARTS})
    if extra:
        lines.append(f"\nThe summaries also give: {', '.join(extra)} (summary.json, `breakdown`).")
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
    en = s.get("energy")
    if en:
        lines += ["", "## Energy of the default and the tuned configuration (NVML, read-only)", "",
                  "Each configuration run again and again for a second while NVML's counter reads; the time "
                  "is the median of those runs (CUDA events), in the same process as the energy. Nothing "
                  "sets a clock or a power limit.", "",
                  "| n | configuration | ms | J per run | ± J | W | runs | graphics MHz read |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for n, x in en.items():
            for who in ("default", "tuned"):
                y = x[who]
                lines.append(f"| {n} | {who} | {fmt(y['ms'])} | {fmt(y['joules'], '.4f')} | "
                             f"{fmt(y['uncertainty_j'], '.4f')} | {fmt(y['watts'], '.1f')} | "
                             f"{fmt(y['runs'], '.0f')} | {fmt(y['core_mhz'], '.0f')} |")
        first = next(iter(en.values()))
        acc = first.get("accuracy")
        lines.append(f"\nMeter: {first.get('meter') or '-'}; quantum {fmt(first.get('quantum_j'), 'g')} J, "
                     f"updated about every {fmt(first.get('update_ms'), '.0f')} ms, accuracy "
                     f"{'none stated' if acc is None else format(acc, '.0%')}. Default over tuned energy: "
                     + ", ".join(f"n = {n} {fmt(x['energy_ratio'], '.2f')}x" for n, x in en.items()) + ".")
        errs = [f"n = {n}: {x['error']}" for n, x in en.items() if x.get("error")]
        if errs:
            lines.append("\nNot measured: " + "; ".join(errs))
    g = s.get("sgemm")
    if g:
        lines += ["", "## sgemm_cuda against cuBLAS (cudarc's cuBLAS, FP32, TF32 off; all three timed alike, "
                  "interleaved)", "",
                  f"{g.get('device', '')}: {g.get('valid_on_device', '-')} configurations valid on it. "
                  "× cuBLAS is cuBLAS's time over the kernel's (above 1: faster than cuBLAS).", "",
                  "| shape | cuBLAS TFLOP/s | default TFLOP/s | default × cuBLAS | tuned TFLOP/s | tuned × cuBLAS "
                  "| tuning s | configuration |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for x in g.get("shapes", []):
            if x.get("error"):
                lines.append(f"| {x['shape']} | failed: {x['error']} | | | | | | |")
                continue
            lines.append(f"| {x['shape']} | {fmt(x.get('cublas_tflops'), '.1f')} | {fmt(x.get('default_tflops'), '.1f')} "
                         f"| {fmt(x.get('default_vs_cublas'), '.2f')} | {fmt(x.get('tuned_tflops'), '.1f')} "
                         f"| {fmt(x.get('tuned_vs_cublas'), '.2f')} | {fmt(x.get('first_call_s'), '.1f')} "
                         f"| {x.get('config', '')} |")
        said = {True: "met", False: "not met", None: "not measured"}
        goals = g.get("goals") or {}
        lines.append(f"\nGoals: tuned ≥ 0.90× cuBLAS at 2048 and 4096: {said[goals.get('square_0.9')]}; "
                     f"≥ 1.0× cuBLAS on a non-square shape: {said[goals.get('non_square_1.0')]}.")
        errs = sorted({x["cublas_error"] for x in g.get("shapes", []) if x.get("cublas_error")})
        if errs or g.get("error"):
            lines.append("\nsgemm_cuda: " + "; ".join(errs + ([g["error"]] if g.get("error") else [])))
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
    if kt.get("note"):
        lines.append(f"\nKernel Tuner: {kt['note']}")
    lines += ["", f"## Batch policies (n = {first}, `auto`, 100 evaluations)", "",
              "| policy | wall s | compile s | measure s | evaluations | tuned ms |", "| --- | --- | --- | --- | --- | --- |"]
    for label, name in (("default (by the compile/measure ratio)", f"tune-{first}"),
                        ("one at a time (TUNABLE_BATCH=1)", f"serial-{first}"),
                        ("16 at a time (TUNABLE_BATCH=16)", f"batch16-{first}"),
                        ("default, an empty build cache (TUNABLE_BUILD_CACHE)", f"cache-cold-{first}"),
                        ("default, rerun with that build cache", f"cached-{first}")):
        m = (s["tuning"].get(name) or {}).get("summary") or {}
        lines.append(f"| {label} | {fmt(m.get('seconds'), '.1f')} | {fmt(m.get('compile'), '.1f')} | "
                     f"{fmt(m.get('measure'), '.1f')} | {fmt(m.get('evaluations'), '.0f')} | {fmt(m.get('tuned'))} |")
    ex = s["tuning"].get(f"exhaustive-{first}") or {}
    em = ex.get("summary") or {}
    lines += ["", f"## Exhaustive (n = {first}, default batch, TUNABLE_TIMEOUT=1)", ""]
    if em:
        space = ex.get("space")
        whole = space is not None and em["evaluations"] >= space
        rate = em["evaluations"] / em["seconds"] if em.get("seconds") else None
        lines.append(f"{em['evaluations']:.0f} of {space if space is not None else '?'} configurations "
                     f"({'all' if whole else 'stopped by its time limit'}) in {em['seconds']:.1f} s "
                     f"({fmt(rate, '.1f')} per second"
                     + ("" if whole or not rate or space is None else f"; all of them at that rate: about {space / rate:.0f} s")
                     + f"); best {fmt(em.get('tuned'))} ms [{em.get('config')}].")
    else:
        lines.append("No summary line: see the step's status above.")
    nv = s.get("nvrtc") or {}
    if nv:
        one, two = nv.get("nvrtc-one") or {}, nv.get("nvrtc-two") or {}
        full = nv.get("nvrtc-full") or {}
        lines += ["", "## NVRTC in one process, in two at once, and without -minimal (`gemm_cuda --ptx`, build cache off)", "",
                  "| run | architecture | compiled | seconds |", "| --- | --- | --- | --- |"]
        for label, x in (("one process", one), ("two at once", two),
                         ("one process, without -minimal", full)):
            if x:
                lines.append(f"| {label} | {x['arch']} | {' + '.join(map(str, x['compiled']))} | "
                             f"{' / '.join(format(t, '.1f') for t in x['seconds'])} |")
        if one and len(two.get("seconds", [])) == 2:
            ratio = max(two["seconds"]) / one["seconds"][0]
            lines.append(f"\nTwo processes took {ratio:.2f} times one's time for twice the builds: "
                         + ("more processes build faster (NVRTC does not scale within one)." if ratio < 1.5
                            else "the CPU, not NVRTC's threads, is the limit."))
        if one and full:
            saved = full["seconds"][0] - one["seconds"][0]
            lines.append(f"\nNVRTC's -minimal saved {saved:.1f} s of {full['seconds'][0]:.1f} "
                         f"({100 * saved / full['seconds'][0]:.1f}%; one run each way).")
    for key, what in (("pool", "100 evaluations of `auto`"), ("pool_exhaustive", "300 evaluations of `exhaustive`")):
        ways = s.get(key) or {}
        if not ways:
            continue
        lines += ["", f"## The compile pool's ways, {what} (`gemm_cuda --pool`: NVRTC for real, an 8 ms wait per "
                  "measurement, no GPU)", "",
                  "| way | rounds | mean wall s | mean s waiting for NVRTC | walls |", "| --- | --- | --- | --- | --- |"]
        for way, x in ways.items():
            n = len(x["wall"])
            lines.append(f"| {way} | {n} | {sum(x['wall']) / n:.2f} | {sum(x['waited']) / n:.2f} | "
                         f"{' / '.join(format(t, '.2f') for t in x['wall'])} |")
    lines += ["", "## wgpu on the NVIDIA Vulkan driver", "",
              "| example | device | tuning wall s | default ms | tuned ms | speedup (timed alike) | configuration |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, x in (s.get("wgpu") or {}).items():
        m = x.get("summary") or {}
        lines.append(f"| {name} | {x.get('device')} | {fmt(m.get('seconds'), '.1f')} | {fmt(x.get('default_ms'))} | "
                     f"{fmt(x.get('tuned_ms'))} | {fmt(x.get('speedup'), '.2f')} | {m.get('config', '-')} |")
    cc = s.get("cubecl")
    if cc:
        lines += ["", "## CubeCL on the NVIDIA Vulkan driver", "", f"device: {cc.get('device')}", "",
                  "| way | ms | against the default | time to its answer |", "| --- | --- | --- | --- |"]
        for key, name in (("default", "default"), ("tuned", "#[tunable], whole space"),
                          ("set", "CubeCL TunableSet, 10 picked")):
            r = cc["rows"].get(key)
            if r:
                lines.append(f"| {name} | {r['ms']:.3f} | {r['speedup']:.2f}x | {r['took']} |")
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
        "wgpu": wgpu(w),
        "cubecl": cubecl(w),
        "nvrtc": nvrtc_processes(w),
        "pool": pool_ways(w),
        "pool_exhaustive": pool_ways(w, "pool-exhaustive"),
        "sgemm": sgemm(w),
        "energy": energy(w, args.sizes),
    }
    repeats = attribute_repeats(os.path.join(ROOT, "examples", "gemm_cuda.rs"))
    names = [f"tune-{n}" for n in args.sizes]
    names += [f"{run}-{n}" for n in args.sizes
              for run in ("serial", "batch16", "exhaustive", "cache-cold", "cached")]
    for name in names:
        if os.path.exists(os.path.join(w, f"{name}.log")):
            s["tuning"][name] = tuning(w, name, repeats)
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
