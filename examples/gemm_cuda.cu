// Tiled SGEMM in CUDA C, C = A * B, row-major n x n matrices (n a multiple of the block tile).
//
// A block of block_size_x x block_size_y threads computes a TM x TN tile of C, with
// TM = block_size_y * tile_size_y rows and TN = block_size_x * tile_size_x columns, stepping
// through K by KB. Each thread computes tile_size_y rows (strided by block_size_y) and
// tile_size_x columns as tile_size_x / VW vectors of VW floats (strided by block_size_x vectors,
// so neighbouring threads touch neighbouring memory).
//
// Parameters (each given as -DNAME=value):
//   block_size_x, block_size_y   threads per block (Kernel Tuner's block size names)
//   tile_size_x, tile_size_y     outputs per thread along N and M
//   KB                           K step: depth of the staged tiles
//   VW                           vector width of the loads of B and stores of C (1, 2, 4)
//   use_shared                   1: stage the KB x TM tile of A and KB x TN tile of B in shared memory
//
// Compiled for a real architecture, ptxas rejects a staged tile beyond the 48 KiB of static
// shared memory a block may declare ("uses too much shared data").

#define TM (block_size_y * tile_size_y)
#define TN (block_size_x * tile_size_x)
#define THREADS (block_size_x * block_size_y)

static_assert(tile_size_x % VW == 0, "tile_size_x must be a multiple of VW");
#define VX (tile_size_x / VW)

#if VW == 1
typedef float floatv;
__device__ __forceinline__ floatv vzero() { return 0.0f; }
__device__ __forceinline__ floatv vfma(float a, floatv b, floatv c) { return fmaf(a, b, c); }
#elif VW == 2
typedef float2 floatv;
__device__ __forceinline__ floatv vzero() { return make_float2(0.0f, 0.0f); }
__device__ __forceinline__ floatv vfma(float a, floatv b, floatv c) {
    return make_float2(fmaf(a, b.x, c.x), fmaf(a, b.y, c.y));
}
#elif VW == 4
typedef float4 floatv;
__device__ __forceinline__ floatv vzero() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
__device__ __forceinline__ floatv vfma(float a, floatv b, floatv c) {
    return make_float4(fmaf(a, b.x, c.x), fmaf(a, b.y, c.y), fmaf(a, b.z, c.z), fmaf(a, b.w, c.w));
}
#else
#error VW must be 1, 2 or 4
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
gemm(const int n, const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int bn = blockIdx.x * TN, bm = blockIdx.y * TM;

#if use_shared
    const int tid = ty * block_size_x + tx;
    __shared__ float As[KB][TM];
    __shared__ floatv Bs[KB][TN / VW];
#endif

    floatv acc[tile_size_y][VX];
#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
        for (int xv = 0; xv < VX; xv++)
            acc[yi][xv] = vzero();

    for (int k0 = 0; k0 < n; k0 += KB) {
#if use_shared
        for (int i = tid; i < KB * TM; i += THREADS) {
            const int m = i / KB, k = i % KB;
            As[k][m] = A[(bm + m) * n + k0 + k];
        }
        for (int i = tid; i < KB * (TN / VW); i += THREADS) {
            const int k = i / (TN / VW), v = i % (TN / VW);
            Bs[k][v] = reinterpret_cast<const floatv *>(B + (k0 + k) * n + bn)[v];
        }
        __syncthreads();
#endif
#pragma unroll 4
        for (int k = 0; k < KB; k++) {
            float a[tile_size_y];
            floatv b[VX];
#pragma unroll
            for (int yi = 0; yi < tile_size_y; yi++) {
#if use_shared
                a[yi] = As[k][ty + yi * block_size_y];
#else
                a[yi] = A[(bm + ty + yi * block_size_y) * n + k0 + k];
#endif
            }
#pragma unroll
            for (int xv = 0; xv < VX; xv++) {
#if use_shared
                b[xv] = Bs[k][tx + xv * block_size_x];
#else
                b[xv] = reinterpret_cast<const floatv *>(B + (k0 + k) * n + bn)[tx + xv * block_size_x];
#endif
            }
#pragma unroll
            for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
                for (int xv = 0; xv < VX; xv++)
                    acc[yi][xv] = vfma(a[yi], b[xv], acc[yi][xv]);
        }
#if use_shared
        __syncthreads();
#endif
    }

#pragma unroll
    for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
        for (int xv = 0; xv < VX; xv++)
            reinterpret_cast<floatv *>(C + (bm + ty + yi * block_size_y) * n + bn)[tx + xv * block_size_x] =
                acc[yi][xv];
}
