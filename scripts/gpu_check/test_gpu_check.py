"""Checks the GPU check's Python side without a GPU: the space read from the Rust attribute, the
journal reader, and the summary of a fake run folder laid out as `scripts/gpu-check run` leaves
it (every figure in it is made up; what is checked is the reading and the verdicts).

    python3 -m unittest discover -s scripts/gpu_check -p 'test_*.py'
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import journal  # noqa: E402
import space  # noqa: E402

DEVICE = "cuda: NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def dump(obj, path):
    write(path, json.dumps(obj))


def load(path):
    with open(path) as f:
        return f.read()


def summary_line(key, default, tuned, evaluations, seconds, compile_s, kernel="gemm_cuda", device=DEVICE,
                 kernels=None):
    # The format of tunable_runtime::tuner::Summary's Display; with `kernels`, as it is once the
    # tuner sums the kernels' own time (measure 4.0 s).
    extra = "" if kernels is None else (f"; kernels {kernels:.3f} s, overhead {4.0 - kernels:.3f} s "
                                        f"({(4.0 - kernels) * 1e3 / (evaluations - 3):.1f} ms per configuration)")
    return (f"tunable: tuned {kernel} (key {key}) on {device}: default {default:.4f} ms -> tuned "
            f"{tuned:.4f} ms ({default / tuned:.2f}x) [block_size_x=16, block_size_y=16]; {evaluations} "
            f"evaluations ({evaluations - 3} measured, 3 failed, 10 stopped early) in {seconds:.1f} s: "
            f"compile {compile_s:.1f} s, measure 4.0 s, strategy 0.1 s, other 0.5 s; 500.0/min{extra}; best 3 re-timed")


def log_lines(key, times, costs=None):
    """TUNABLE_LOG's evaluation lines: (ms, runs before an early stop or None); with `costs`, each
    line's (measured in, kernels) ms, as the tuner prints once it measures them."""
    costs = costs or [None] * len(times)
    return "".join(f"tunable: gemm_cuda (key {key}) [block_size_x=16, VW={i}] {ms:.4f} ms"
                   + ("" if runs is None else f" (stopped early after {runs} run{'' if runs == 1 else 's'})")
                   + ("" if c is None else f"; measured in {c[0]:.1f} ms, kernels {c[1]:.1f} ms")
                   + ("" if c is None or len(c) < 3 else f", output checked in {c[2]:.1f} ms") + "\n"
                   for i, ((ms, runs), c) in enumerate(zip(times, costs)))


def unclosed_journal(path, records):
    """A journal as the tuner leaves it: a header, one record per line, unclosed."""
    with open(path, "w") as f:
        f.write('{"device_name": "x", "kernel_name": "k", "tune_params_keys": ["block", "FAULT"], "cache": {\n')
        for key, rec in records:
            f.write(json.dumps(key) + ": " + json.dumps(rec) + ",\n")


class SpaceTest(unittest.TestCase):
    def test_the_gemm_space_is_read_from_the_attribute(self):
        params, constraints, default = space.parse(os.path.join(ROOT, "examples/gemm_cuda.rs"))
        self.assertEqual(list(params), ["block_size_x", "block_size_y", "tile_size_x", "tile_size_y",
                                        "KB", "VW", "use_shared"])
        self.assertEqual(len(constraints), 3)
        self.assertEqual(default["tile_size_x"], 1)
        configs = space.valid(params, constraints)
        self.assertIn(default, configs)
        self.assertTrue(all(c["tile_size_x"] % c["VW"] == 0 for c in configs))
        self.assertLess(len(configs), 3 * 4 * 4 * 4 * 2 * 3 * 2)


class JournalTest(unittest.TestCase):
    def test_best_after_counts_failures_as_evaluations(self):
        times = [5.0, None, 4.0] + [3.0] * 30 + [None] * 20 + [1.0] * 60
        self.assertEqual(journal.best_after(times), {"25": 3.0, "50": 3.0, "100": 1.0})
        self.assertEqual(journal.best_after([None, None]), {"25": None, "50": None, "100": None})

    def test_an_unclosed_journal_is_read_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "j.cache.json")
            unclosed_journal(p, [("1,0", {"time": 2.0}), ("1,1", {"time": "RuntimeFailedConfig", "reason": "x"}),
                                 ("2,0", {"time": 1.0})])
            times, entries = journal.cache_times(p)
            self.assertEqual(times, [2.0, None, 1.0])
            self.assertEqual(entries[1]["reason"], "x")


def energy_json(n, scale):
    """What `gemm_cuda --energy --json` writes: the default at 2 ms and 300 W, the tuned one at
    0.5 ms and 400 W (times `scale`)."""
    r = {"autotune": True, "n": n, "origin": "Stored", "config": "GemmCudaParams { block_size_x: 32 }",
         "energy_meter": "NVML energy counter of NVIDIA H100 80GB HBM3 (00000000:3B:00.0)",
         "energy_quantum_j": 0.001, "energy_update_ms": 100.0, "energy_accuracy": None}
    for who, ms, watts in (("default", 2.0, 300.0), ("tuned", 0.5, 400.0)):
        r.update({f"{who}_ms_metered": ms * scale, f"{who}_energy_j": ms * scale * watts / 1e3,
                  f"{who}_energy_uncertainty_j": 0.0004, f"{who}_power_w": watts,
                  f"{who}_energy_runs": 1000 / (ms * scale), f"{who}_core_mhz": 1980})
    return r


class SummaryTest(unittest.TestCase):
    def fake_run(self, w, faults_ok=True, wgpu_device=None):
        os.makedirs(w)
        write(os.path.join(w, "machine.txt"), "NVIDIA H100 80GB HBM3, 580.159.04\n")
        steps = ["test-tunable_runtime-cuda_backend\tpassed\t0\t1.2\t",
                 "tune-2048\tpassed\t0\t20.0\t", "tune-4096\tpassed\t0\t30.0\t",
                 "serial-2048\tpassed\t0\t60.0\t", "batch16-2048\tpassed\t0\t7.0\t",
                 "exhaustive-2048\tpassed\t0\t150.0\t", "sgemm\tpassed\t0\t90.0\t"]
        write(os.path.join(w, "steps.tsv"), "\n".join(steps) + "\n")
        write(os.path.join(w, "test-tunable_runtime-cuda_backend.log"), 
            "NVRTC 13.0 (/opt/site/nvidia/cu13/lib/libnvrtc.so.13)\n"
            "test a ... ok\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
        for name, n, tuned, secs, comp, evals in (
                ("tune-2048", 2048, 0.5, 20.0, 3.0, 100), ("tune-4096", 4096, 4.0, 30.0, 3.5, 100),
                ("serial-2048", 2048, 0.52, 60.0, 40.0, 100), ("batch16-2048", 2048, 0.51, 7.0, 1.0, 100),
                ("exhaustive-2048", 2048, 0.49, 150.0, 80.0, 600)):
            # tune-2048 logs every evaluation: 2 ms in full (5 runs + 1), 4 ms stopped after 1 run.
            logged = {"tune-2048": log_lines(n, [(2.0, None), (4.0, 1)]),
                      "serial-2048": log_lines(n, [(2.0, None), (4.0, 1)], [(30.0, 12.5, 3.0), (20.0, 8.5, 1.0)])}.get(name, "")
            write(os.path.join(w, f"{name}.log"),
                "device: x\n" + logged + f"gemm_cuda n = {n}: 1545 valid configurations of 2304\n"
                + summary_line(n, tuned * 4, tuned, evals, secs, comp,
                               kernels=0.4 if name == "batch16-2048" else None) + "\n")
            dump({"n": n, "tuned_ms": tuned, "default_ms": tuned * 4}, os.path.join(w, f"{name}.json"))
            os.makedirs(os.path.join(w, name))
            unclosed_journal(os.path.join(w, name, f"gemm_cuda-{n}-0.cache.json"),
                             [(str(i), {"time": 10.0 - i * 0.05}) for i in range(100)])
        for way, ms, prov, loaded in (("embedded", 40.0, "embedded binary", False), ("compiled", 400.0, "compiled", True)):
            for i, jitter in enumerate((1.0, 0.0, 2.0), 1):
                dump({"first_call_ms": ms + jitter, "origin": "Baked", "provenance": prov,
                           "nvrtc_loaded_by_first_call": loaded, "config": "P", "device": DEVICE, "tuned_ms": 0.6},
                          os.path.join(w, f"shipped-{way}-{i}.json"))
        os.makedirs(os.path.join(w, "faults"))
        reasons = {1: "[block=128, FAULT=1] wrong output: 4194304 of 4194304 elements differ",
                   2: "[block=128, FAULT=2] block of 128 threads [128] exceeds this kernel's maximum of 64 threads",
                   4: "[block=128, FAULT=4] timed out: still running after 500ms",
                   5: "[block=128, FAULT=5] uses 307200 bytes of shared memory per block; the device allows 232448"}
        recs = []
        for f in range(6):
            for block in (128, 256):
                if f in reasons:
                    recs.append((f"{block},{f}", {"block": block, "FAULT": f, "time": "RuntimeFailedConfig",
                                                  "reason": reasons[f] if faults_ok or f != 1 else "something else"}))
                else:
                    t = 0.05 if f == 0 else 1.0
                    recs.append((f"{block},{f}", {"block": block, "FAULT": f, "time": t, "times": [t]}))
        unclosed_journal(os.path.join(w, "faults", "add_one-4194304-0.cache.json"), recs)
        write(os.path.join(w, "faults.log"), 
            "device: x\nchosen AddOneParams { block: 128, FAULT: 0 }\ncorrect true\n")
        dump({"sizes": {"2048": {"ms": 0.25}, "4096": {"ms": 2.0}}}, os.path.join(w, "cublas.json"))
        vulkan = "wgpu: NVIDIA H100 80GB HBM3 (Vulkan, NVIDIA 580.159.04)"
        for name, kernel in (("vector_add", "vector_add_wgpu"), ("matmul", "matmul_wgpu")):
            write(os.path.join(w, f"wgpu-{name}.log"),
                  f"device: {wgpu_device or vulkan}\n" + summary_line(2048, 20.0, 11.0, 24, 4.5, 1.1, kernel, vulkan)
                  + f"\n{kernel} n = 2048:\n  default P {{ tile: 16 }}: 20.500 ms (800.00 GFLOP/s)\n"
                  "  tuned P { tile: 4 }: 10.250 ms (1600.00 GFLOP/s), speedup 2.00x over the default\n"
                  "  (both timed alike, interleaved: ...; 7 rounds, timestamp queries)\n")
        write(os.path.join(w, "cubecl-matmul.log"),
              f"device: cubecl: {vulkan}\nmatmul_cubecl n = 2048: 1740 valid configurations of 3136\n"
              "                                          ms   GFLOP/s  speedup   time to answer\n"
              "  default                             40.000    429.50    1.00x                -\n"
              "  #[tunable], whole space              8.000   2147.48    5.00x           12.5 s\n"
              "  CubeCL TunableSet, 10 picked        10.000   1717.99    4.00x            0.9 s\n"
              "  result matches the CPU reference (max relative error 1.0e-6)\n")
        nvrtc = "NVRTC (sm_90): 1545 of 1545 configurations compiled to PTX in {} s, 0 failed\n"
        write(os.path.join(w, "nvrtc-one.log"), nvrtc.format(27.2))
        write(os.path.join(w, "nvrtc-two.log"), nvrtc.format(28.0) + nvrtc.format(29.5))
        write(os.path.join(w, "nvrtc-full.log"), nvrtc.format(29.0))
        write(os.path.join(w, "pool.log"), "gemm_cuda --pool sm_90: auto, 100 evaluations, ...\n" + "".join(
            f"  round {r}, {way:>7}: {wall} s, {waited} s of it waiting for NVRTC; 100 evaluated, 120 handed to the pool\n"
            for r in (1, 2) for way, wall, waited in (("batched", 3.0 + r, 2.5), ("alone", 4.0, 3.5), ("none", 5.0, 4.5)))
            + "  mean batched: 4.50 s, 2.50 s waiting for NVRTC\n")
        write(os.path.join(w, "pool-exhaustive.log"), "gemm_cuda --pool sm_90: exhaustive, 300 evaluations, ...\n"
              "  round 1, batched: 6.00 s, 3.00 s of it waiting for NVRTC; 300 evaluated, 298 handed to the pool\n"
              "  round 1,   alone: 7.50 s, 4.50 s of it waiting for NVRTC; 300 evaluated, 298 handed to the pool\n")
        shape = lambda name, cublas, tuned: {  # noqa: E731
            "shape": name, "cublas_ms": cublas, "tuned_ms": tuned, "default_ms": tuned * 2,
            "cublas_tflops": 10.0 / cublas, "tuned_tflops": 10.0 / tuned, "default_tflops": 5.0 / tuned,
            "tuned_vs_cublas": cublas / tuned, "default_vs_cublas": cublas / tuned / 2,
            "first_call_s": 20.0, "config": "SgemmCudaParams { BM: 128 }"}
        dump({"device": DEVICE, "valid_on_device": 20000,
              "shapes": [shape("2048", 0.40, 0.50), shape("4096", 2.0, 2.1), shape("4096x128x4096", 0.1, 0.08),
                         shape("128x4096x8192", 0.2, 0.25)]}, os.path.join(w, "sgemm.json"))
        for n, scale in ((2048, 1.0), (4096, 8.0)):
            dump(energy_json(n, scale), os.path.join(w, f"energy-{n}.json"))
        dump({"kernel_tuner": "1.5.0", "strategy": "genetic_algorithm", "evaluations": 100, "failed": 2,
                   "best_after": {"25": 0.9, "50": 0.7, "100": 0.6}, "seconds": 120.0},
                  os.path.join(w, "kt.json"))

    def summarize(self, w, out):
        return subprocess.run([sys.executable, os.path.join(HERE, "summarize.py"), w, out, "--sizes", "2048", "4096"],
                              capture_output=True, text=True)

    def test_a_good_run_passes_and_its_figures_are_read(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w)
            r = self.summarize(w, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertTrue(s["ok"])
            m = s["tuning"]["tune-2048"]["summary"]
            self.assertEqual((m["default_ms"], m["tuned"], m["speedup"], m["compile"]), (2.0, 0.5, 4.0, 3.0))
            self.assertEqual(s["tuning"]["tune-2048"]["journal"]["best_after"]["100"], 10.0 - 99 * 0.05)
            self.assertEqual(s["shipped"]["embedded"]["first_call_ms_median"], 41.0)
            self.assertEqual(s["shipped"]["embedded"]["nvrtc_loaded"], [False])
            self.assertAlmostEqual(s["faults"]["checks"]["3"]["slowdown"], 20.0)
            self.assertEqual(s["tests"]["tunable_runtime-cuda_backend"]["nvrtc"],
                             ["NVRTC 13.0 (/opt/site/nvidia/cu13/lib/libnvrtc.so.13)"])
            md = load(os.path.join(out, "summary.md"))
            self.assertIn("| 2048 | 0.500 | 0.250 | 2.00 |", md)
            self.assertIn("**Overall: PASS**", md)
            # The kernels' own time: estimated from the log (2 ms x 6 runs + 4 ms x 2 runs), or
            # the summary's where it gives it.
            k = s["tuning"]["tune-2048"]["kernels"]
            self.assertAlmostEqual(k["seconds"], 0.020)
            self.assertEqual((k["source"], k["evaluations"]), ("estimated from TUNABLE_LOG", 2))
            self.assertEqual(s["tuning"]["serial-2048"]["kernels"],
                             {"seconds": 0.021, "source": "summed from TUNABLE_LOG", "evaluations": 2})
            # The output checks of its lines: 4 ms over 2 configurations.
            self.assertEqual(s["tuning"]["serial-2048"]["check"], {"seconds": 0.004, "evaluations": 2})
            self.assertNotIn("check", s["tuning"]["tune-2048"])
            self.assertIn("ms per configuration: serial-2048 2.0.", md)
            self.assertEqual(s["tuning"]["batch16-2048"]["kernels"],
                             {"seconds": 0.4, "source": "the tuner's summary"})
            b16 = s["tuning"]["batch16-2048"]["summary"]
            self.assertEqual((b16["overhead"], b16["overhead_per_config"]), (3.6, 37.1))
            self.assertNotIn("kernels", s["tuning"]["tune-4096"])
            self.assertIn("| batch16-2048 | 2.040 | 0.510 | 4.00 | 100 (97, 3, 10) | 7.0 | 1.0 | 4.0 | 0.10 | 0.5 "
                          "| 0.40 | 41.2 | 37.1 |", md)
            self.assertIn("| tune-2048 | 2.000 | 0.500 | 4.00 | 100 (97, 3, 10) | 20.0 | 3.0 | 4.0 | 0.10 | 0.5 "
                          "| ~0.02 | 41.2 | 41.0 |", md)
            self.assertIn("| 16 at a time (TUNABLE_BATCH=16) | 7.0 | 1.0 | 4.0 | 100 | 0.510 |", md)
            self.assertIn("600 of 1545 configurations (stopped by its time limit) in 150.0 s (4.0 per second; "
                          "all of them at that rate: about 386 s)", md)
            self.assertEqual(s["nvrtc"]["nvrtc-two"]["seconds"], [28.0, 29.5])
            self.assertIn("| two at once | sm_90 | 1545 + 1545 | 28.0 / 29.5 |", md)
            self.assertIn("Two processes took 1.08 times one's time for twice the builds: more processes", md)
            self.assertIn("| one process, without -minimal | sm_90 | 1545 | 29.0 |", md)
            self.assertIn("NVRTC's -minimal saved 1.8 s of 29.0 (6.2%; one run each way).", md)
            self.assertEqual(s["pool"]["batched"], {"wall": [4.0, 5.0], "waited": [2.5, 2.5]})
            self.assertEqual(list(s["pool"]), ["batched", "alone", "none"])
            self.assertIn("| batched | 2 | 4.50 | 2.50 | 4.00 / 5.00 |", md)
            self.assertEqual(s["pool_exhaustive"]["alone"], {"wall": [7.5], "waited": [4.5]})
            self.assertIn("## The compile pool's ways, 300 evaluations of `exhaustive`", md)
            self.assertIn("| alone | 1 | 7.50 | 4.50 | 7.50 |", md)
            self.assertEqual(s["sgemm"]["goals"], {"square_0.9": False, "non_square_1.0": True})
            self.assertIn("| 4096x128x4096 | 100.0 | 62.5 | 0.62 | 125.0 | 1.25 | 20.0 | SgemmCudaParams { BM: 128 } |", md)
            self.assertIn("Goals: tuned ≥ 0.90× cuBLAS at 2048 and 4096: not met; "
                          "≥ 1.0× cuBLAS on a non-square shape: met.", md)
            self.assertEqual(s["wgpu"]["matmul"]["speedup"], 2.0)
            self.assertEqual(s["cubecl"]["rows"]["tuned"], {"ms": 8.0, "speedup": 5.0, "took": "12.5 s"})
            self.assertTrue(s["cubecl"]["verified"])
            self.assertIn("| CubeCL TunableSet, 10 picked | 10.000 | 4.00x | 0.9 s |", md)
            self.assertIn("| matmul | wgpu: NVIDIA H100 80GB HBM3 (Vulkan, NVIDIA 580.159.04) | 4.5 | 20.500 | "
                          "10.250 | 2.00 |", md)

    def test_the_energy_of_both_configurations_is_reported_beside_their_time(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w)
            r = self.summarize(w, out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertTrue(s["verdicts"]["energy"]["ok"])
            e = s["energy"]["4096"]
            self.assertEqual((e["tuned"]["ms"], e["tuned"]["joules"], e["tuned"]["watts"]), (4.0, 1.6, 400.0))
            self.assertAlmostEqual(e["energy_ratio"], 3.0)
            md = load(os.path.join(out, "summary.md"))
            self.assertIn("| 2048 | default | 2.000 | 0.6000 | 0.0004 | 300.0 | 500 | 1980 |", md)
            self.assertIn("| 4096 | tuned | 4.000 | 1.6000 | 0.0004 | 400.0 | 250 | 1980 |", md)
            self.assertIn("quantum 0.001 J, updated about every 100 ms, accuracy none stated. Default over "
                          "tuned energy: n = 2048 3.00x, n = 4096 3.00x.", md)

    def test_energy_nvml_could_not_read_fails_the_check_with_the_reason(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w)
            why = "not measurable here: NVML of NVIDIA H100 is in MIG mode"
            dump({"n": 4096, "energy_error": why}, os.path.join(w, "energy-4096.json"))
            self.assertEqual(self.summarize(w, out).returncode, 1)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertFalse(s["verdicts"]["energy"]["ok"])
            self.assertIn(f"Not measured: n = 4096: {why}", load(os.path.join(out, "summary.md")))

    def test_wgpu_on_another_adapter_fails_the_check(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w, wgpu_device="wgpu: llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Mesa 22.3.6)")
            self.assertEqual(self.summarize(w, out).returncode, 1)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertFalse(s["verdicts"]["wgpu"]["ok"])
            self.assertTrue(s["verdicts"]["tuning"]["ok"])

    def test_an_sgemm_shape_that_failed_fails_the_check(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w)
            dump({"device": DEVICE, "shapes": [{"shape": "2048", "error": "wrong result: relative error 0.5"}]},
                 os.path.join(w, "sgemm.json"))
            self.assertEqual(self.summarize(w, out).returncode, 1)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertFalse(s["verdicts"]["sgemm"]["ok"])
            self.assertEqual(s["sgemm"]["goals"], {"square_0.9": None, "non_square_1.0": None})
            self.assertIn("| 2048 | failed: wrong result: relative error 0.5 |", load(os.path.join(out, "summary.md")))

    def test_a_fault_recorded_for_another_reason_fails_the_check(self):
        with tempfile.TemporaryDirectory() as d:
            w, out = os.path.join(d, "w"), os.path.join(d, "out")
            self.fake_run(w, faults_ok=False)
            r = self.summarize(w, out)
            self.assertEqual(r.returncode, 1)
            s = json.loads(load(os.path.join(out, "summary.json")))
            self.assertFalse(s["faults"]["checks"]["1"]["ok"])
            self.assertTrue(s["faults"]["checks"]["2"]["ok"])


class ReadOnlyTest(unittest.TestCase):
    """The check runs on lent GPU machines, whose settings it must never change."""

    def test_the_check_never_changes_a_gpu_setting(self):
        script = load(os.path.join(ROOT, "scripts", "gpu-check"))
        for flag in ("-ac ", "-acp", "-lgc", "-lmc", "-pl ", "-pm ", "-rgc", "-rmc", "-rac",
                     "--lock-gpu-clocks", "--power-limit", "--applications-clocks", "--persistence-mode"):
            self.assertNotIn(f"nvidia-smi {flag}", script)
            self.assertNotRegex(script, r"nvidia-smi[^\n]*\s" + flag.strip() + r"\b")
        # No clock parameter is tuned: gemm_cuda's space has none.
        self.assertNotIn("nvml_", load(os.path.join(ROOT, "examples", "gemm_cuda.rs")))

    def test_without_a_gpu_the_run_half_says_so_and_exits_3(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, OUT=d, PATH="/usr/bin:/bin")
            if subprocess.run(["sh", "-c", "command -v nvidia-smi"], env=env, capture_output=True).returncode == 0:
                self.skipTest("nvidia-smi is on this machine's PATH")
            r = subprocess.run([os.path.join(ROOT, "scripts", "gpu-check"), "run"], env=env,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("no GPU is present", r.stdout)
            self.assertEqual(json.loads(load(os.path.join(d, "summary.json"))),
                             {"gpu": False, "reason": "no GPU is present (nvidia-smi finds none)"})


class KernelTunerWorkaroundTest(unittest.TestCase):
    def test_a_device_uuid_cut_at_a_zero_byte_is_padded_for_kernel_tuner(self):
        import uuid
        sys.path.insert(0, HERE)
        from kernel_tuner_compare import padded_uuid
        record = {}
        whole = {"name": b"H200", "uuid": bytes(range(1, 17))}
        self.assertIs(padded_uuid(whole, record), whole)
        self.assertEqual(record, {})
        cut = {"name": b"H200", "uuid": bytes([7, 9, 3])}
        props = padded_uuid(cut, record)
        self.assertEqual(props["uuid"], bytes([7, 9, 3]) + bytes(13))
        self.assertEqual(str(uuid.UUID(bytes=props["uuid"])), "07090300-0000-0000-0000-000000000000")
        self.assertEqual(cut["uuid"], bytes([7, 9, 3]), "the caller's properties are left alone")
        self.assertIn("3 bytes", record["note"])


@unittest.skipUnless(importlib.util.find_spec("kernel_tuner"), "kernel_tuner is not installed here")
class KernelTunerDriverTest(unittest.TestCase):
    def test_the_driver_tunes_the_same_space_in_simulation(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "kt.json")
            r = subprocess.run([sys.executable, os.path.join(HERE, "kernel_tuner_compare.py"), "--simulate",
                                "--rust", os.path.join(ROOT, "examples/gemm_cuda.rs"),
                                "--source", os.path.join(ROOT, "examples/gemm_cuda.cu"),
                                "--n", "512", "--budget", "60", "--out", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            k = json.loads(load(out))
            self.assertEqual(k["space_size"], k["kernel_tuner_space_size"])
            self.assertEqual(k["evaluations"], 60)
            b = k["best_after"]
            self.assertTrue(b["25"] >= b["50"] >= b["100"] == k["best_ms"])


if __name__ == "__main__":
    unittest.main()
