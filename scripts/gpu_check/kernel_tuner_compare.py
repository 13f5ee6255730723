"""Tunes `examples/gemm_cuda.cu` with Kernel Tuner over the same space as `#[tunable]` does
(parameters, constraints read from `examples/gemm_cuda.rs`), with the same budget, and writes
what `scripts/gpu-check` compares with our tuning: the best time found after 25, 50 and 100
evaluations, the evaluations made, and the wall time of the tuning.

    python3 scripts/gpu_check/kernel_tuner_compare.py --n 2048 --budget 100 --out kt.json

On the GPU machine it runs Kernel Tuner's CuPy backend (`lang="cupy"`: NVRTC through CuPy, CUDA
events). `--simulate` runs the same driver without a GPU, on a synthetic Kernel Tuner cache
covering the whole space (`simulation_mode`), which checks the space, the driver and the
best-so-far bookkeeping, not any timing.

Same kernel, same launch: Kernel Tuner `#define`s each parameter before the source (the source
takes `-DNAME=value` from us); the block is (block_size_x, block_size_y) and the grid divides
(n, n) by the tile a block computes, (block_size_x * tile_size_x, block_size_y * tile_size_y),
as `Dims::divide` does in `gemm_cuda.rs`. The output is checked against a float64 reference with
atol 1e-3 relative to its scale (ours checks against the default configuration's output).
"""

import argparse
import functools
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import space  # noqa: E402

from journal import best_after, entry_time  # noqa: E402


def save(record, path):
    with open(path, "w") as f:
        json.dump(record, f, indent=1)


def synthetic_cache(path, kernel, n, params, configs, device="simulated"):
    """A Kernel Tuner cache holding every configuration with a made-up time (a smooth function of
    the parameters), for --simulate."""
    keys = list(params)
    cache = {}
    for c in configs:
        work = c["block_size_x"] * c["tile_size_x"] * c["block_size_y"] * c["tile_size_y"]
        t = 1.0 + 50.0 / work + 0.1 * c["KB"] / 16 + 0.2 * (1 - c["use_shared"]) + 0.05 * c["VW"]
        key = ",".join(str(c[k]) for k in keys)
        entry = dict(c)
        entry.update({"time": t, "times": [t] * 7, "compile_time": 100.0, "verification_time": 0,
                      "benchmark_time": 7 * t, "strategy_time": 0, "framework_time": 0,
                      "timestamp": "2026-01-01 00:00:00+00:00"})
        cache[key] = entry
    doc = {"device_name": device, "kernel_name": kernel, "problem_size": [n, n],
           "tune_params_keys": keys, "tune_params": params, "objective": "time", "cache": cache}
    with open(path, "w") as f:
        json.dump(doc, f)


def padded_uuid(props, record):
    """`props` (CuPy's device properties) with its `uuid` 16 bytes long. CuPy reads the device's
    16-byte UUID as a C string, so a UUID with a zero byte comes back cut at it, and Kernel
    Tuner's CuPy backend, which makes a `uuid.UUID` of it for its environment record only, then
    fails the whole tuning with ValueError('bytes is not a 16-char string') (an H200 of
    2026-11-28, whose first call had passed on another GPU). The cut bytes are lost; zeros stand
    for them, and `record` says so."""
    u = props.get("uuid")
    if isinstance(u, bytes) and len(u) < 16:
        props = dict(props, uuid=u.ljust(16, b"\0"))
        record["note"] = (f"CuPy gave the device UUID as {len(u)} bytes (cut at a zero byte); "
                          "padded with zeros for Kernel Tuner's environment record")
    return props


def whole_device_uuids(record):
    """Makes `cupy.cuda.runtime.getDeviceProperties` return whole UUIDs ([`padded_uuid`])."""
    import cupy

    original = cupy.cuda.runtime.getDeviceProperties

    @functools.wraps(original)
    def whole(device):
        return padded_uuid(original(device), record)

    cupy.cuda.runtime.getDeviceProperties = whole


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rust", default="examples/gemm_cuda.rs", help="where the space is declared")
    ap.add_argument("--source", default="examples/gemm_cuda.cu", help="the kernel")
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--budget", type=int, default=100, help="max_fevals")
    ap.add_argument("--strategy", default="genetic_algorithm")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds (Kernel Tuner's time_limit)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--simulate", action="store_true", help="no GPU: a synthetic cache, simulation_mode")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    params, constraints, default = space.parse(args.rust)
    configs = space.valid(params, constraints)
    record = {"tool": "kernel_tuner", "n": args.n, "strategy": args.strategy, "budget": args.budget,
              "seed": args.seed, "space_size": len(configs), "simulated": args.simulate}
    try:
        import kernel_tuner
        import numpy as np
        record["kernel_tuner"] = getattr(kernel_tuner, "__version__", "unknown")
    except Exception as e:  # noqa: BLE001 (any import failure is the answer)
        record["error"] = f"kernel_tuner does not import: {e!r}"
        save(record, args.out)
        print(record["error"])
        return 1

    try:
        from kernel_tuner.searchspace import Searchspace

        # Kernel Tuner's own count of the space (its default limit of 1024 threads per block).
        record["kernel_tuner_space_size"] = Searchspace(params, constraints, 1024).size
    except Exception as e:  # noqa: BLE001 (informative only)
        record["kernel_tuner_space_size"] = f"not computed: {e!r}"
    n = args.n
    with open(args.source, encoding="utf-8") as f:
        source = f.read()
    options = {"max_fevals": args.budget}
    if args.time_limit:
        options["time_limit"] = args.time_limit
    kwargs = dict(
        restrictions=constraints,
        grid_div_x=["block_size_x", "tile_size_x"],
        grid_div_y=["block_size_y", "tile_size_y"],
        strategy=args.strategy,
        strategy_options=options,
        iterations=7,
        quiet=True,
        verbose=False,
        seed=args.seed,
        # NVRTC's default dialect, as our compilations use; Kernel Tuner would force C++11.
        compiler_options=["--std=c++17"],
    )
    rng = np.random.default_rng(args.seed)
    if args.simulate:
        a = np.zeros((n, n), dtype=np.float32)
        b = np.zeros((n, n), dtype=np.float32)
        c = np.zeros((n, n), dtype=np.float32)
        cache = args.out + ".cache.json"
        synthetic_cache(cache, "gemm", n, params, configs)
        kwargs.update(cache=cache, simulation_mode=True)
    else:
        whole_device_uuids(record)
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        c = np.zeros((n, n), dtype=np.float32)
        reference = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        scale = float(np.abs(reference).max())
        kwargs.update(lang="cupy", answer=[None, None, None, reference], atol=1e-3 * scale)
    args_list = [np.int32(n), a, b, c]
    start = time.perf_counter()
    try:
        results, env = kernel_tuner.tune_kernel("gemm", source, (n, n), args_list, params, **kwargs)
    except Exception as e:  # noqa: BLE001
        record["error"] = f"tune_kernel failed: {e!r}"
        record["seconds"] = time.perf_counter() - start
        save(record, args.out)
        print(record["error"])
        return 1
    seconds = time.perf_counter() - start
    # Kernel Tuner's results repeat a configuration a strategy visits again (answered from its
    # cache); like our journal, count each configuration once, at its first evaluation.
    seen, unique = set(), []
    for r in results:
        key = tuple(r.get(k) for k in params)
        if key not in seen:
            seen.add(key)
            unique.append(r)
    times = [entry_time(r) for r in unique]
    valid_times = [t for t in times if t is not None]
    best = min(valid_times) if valid_times else None
    best_config = None
    if best is not None:
        r = unique[times.index(best)]
        best_config = {k: r[k] for k in params}
    default_time = next((entry_time(r) for r in unique
                         if all(r.get(k) == v for k, v in default.items())), None)
    # Kernel Tuner's own breakdown of its wall time, in ms.
    phases = {k: v for k, v in env.items() if k.startswith("total_") or k == "overhead_time"} \
        if isinstance(env, dict) else {}
    record.update({
        "seconds": seconds,
        "evaluations": len(unique),
        "results_with_revisits": len(results),
        "failed": len(unique) - len(valid_times),
        "best_ms": best,
        "best_config": best_config,
        "default_ms_if_evaluated": default_time,
        "best_after": best_after(times),
        "phases_ms": phases,
        "device": env.get("device_name") if isinstance(env, dict) else None,
    })
    save(record, args.out)
    print(json.dumps({k: record[k] for k in ("evaluations", "failed", "best_ms", "best_after", "seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
