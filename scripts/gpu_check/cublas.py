"""Times cuBLAS SGEMM through CuPy on the problem `gemm_cuda` solves: C = A * B for row-major
n x n float32 matrices (CuPy arrays are row-major; `cupy.matmul` hands cuBLAS the transposed
problem, which is the same product), in plain float32 (CuPy leaves TF32 off unless CUPY_TF32=1,
and this script refuses to run with it set). Median of CUDA-event times after a warm-up, on
fresh random inputs, with the result checked against a float64 reference.

    python3 scripts/gpu_check/cublas.py --n 2048 4096 --out cublas.json
"""

import argparse
import json
import os
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2048, 4096])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    record = {"tool": "cublas via cupy.matmul (float32, TF32 off)", "sizes": {}}
    if os.environ.get("CUPY_TF32", "0") != "0":
        record["error"] = "CUPY_TF32 is set: the comparison is with plain float32"
    else:
        try:
            import cupy as cp

            record["cupy"] = cp.__version__
            record["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
            record["device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            for n in args.n:
                cp.random.seed(n)
                a = cp.random.uniform(-1, 1, (n, n)).astype(cp.float32)
                b = cp.random.uniform(-1, 1, (n, n)).astype(cp.float32)
                c = cp.full((n, n), cp.nan, dtype=cp.float32)
                for _ in range(3):
                    cp.matmul(a, b, out=c)
                cp.cuda.Device().synchronize()
                times = []
                start, end = cp.cuda.Event(), cp.cuda.Event()
                for _ in range(args.repeats):
                    start.record()
                    cp.matmul(a, b, out=c)
                    end.record()
                    end.synchronize()
                    times.append(cp.cuda.get_elapsed_time(start, end))
                ref = a.astype(cp.float64) @ b.astype(cp.float64)
                err = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
                ms = statistics.median(times)
                record["sizes"][str(n)] = {
                    "ms": ms,
                    "min_ms": min(times),
                    "max_ms": max(times),
                    "tflops": 2.0 * n**3 / (ms * 1e-3) / 1e12,
                    "relative_error": err,
                    "all_written": bool(cp.isfinite(c).all()),
                }
                print(f"cuBLAS SGEMM n = {n}: {ms:.3f} ms ({record['sizes'][str(n)]['tflops']:.1f} TFLOP/s), "
                      f"relative error {err:.1e}")
                del a, b, c, ref
                cp.get_default_memory_pool().free_all_blocks()
        except Exception as e:  # noqa: BLE001 (any failure is the answer)
            record["error"] = repr(e)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
    if "error" in record:
        print("cublas:", record["error"])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
