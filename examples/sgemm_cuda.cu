// Warp-tiled SGEMM in CUDA C: C = A * B for row-major A (M x K), B (K x N), C (M x N).
//
// Shape rules: M % BM == 0, N % BN == 0, K % (BK * SPLITK) == 0 (the Rust side checks them and
// fails the configuration otherwise); rows are then 16-byte aligned, as the float4 loads need.
//
// Structure (one block computes a BM x BN tile of C over its slice of K):
//   - the block's warps form a (BM / WM) x (BN / WN) grid, each warp computing a WM x WN tile;
//   - a warp's 32 lanes form a WTM x WTN grid (WTM = 32 / WTN); each lane computes
//     WMITER x WNITER thread tiles of TM x TN, spaced WTM * TM rows and WTN * TN columns apart,
//     so that the lanes of a warp read neighbouring shared memory;
//   - A and B are read from global memory as float4 (128-bit) vectors; A is stored transposed
//     in shared memory (As[k][m], rows padded by PAD floats against the bank conflicts of the
//     transposing stores), B as it is (Bs[k][n]); both tiles are read back as vectors;
//   - ASYNC 0: loads go through registers; STAGES 2 loads the next tile into registers while the
//     current one is computed (double buffering), STAGES 1 does not.
//     ASYNC 1 (sm_80 and newer): cp.async copies global memory straight into a ring of STAGES
//     shared buffers (B 16 bytes a copy, A 4 bytes a copy, to transpose it), STAGES - 1 tiles
//     ahead of the one computed;
//   - GROUP > 1 orders the blocks in groups of GROUP block rows (blocks running together share
//     tiles of A and B in L2);
//   - SPLITK > 1 splits K over SPLITK blocks per tile (grid z): each writes its partial tile to
//     the workspace W (SPLITK x M x N floats) and counts itself in FLAGS[tile]; the last to
//     arrive adds the partials in split order (deterministic), writes C and sets the flag back
//     to zero for the next launch. One kernel, no atomics on C, C needs no zeroing.
//
// Parameters (each given as -DNAME=value): BM BN BK WM WN TM TN WTN PAD ASYNC STAGES SPLITK GROUP.
// The dynamic shared memory is STAGES * BK * (BM + PAD + BN) * 4 bytes.

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WTM (32 / WTN)
#define WMITER (WM / (WTM * TM))
#define WNITER (WN / (WTN * TN))
#define LDA (BM + PAD)
#define A_TILE (BK * LDA)
#define B_TILE (BK * BN)
#define STAGE (A_TILE + B_TILE)
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must divide the block tile");
static_assert(32 % WTN == 0, "WTN must divide a warp");
static_assert(WMITER >= 1 && WM % (WTM * TM) == 0, "WM must be a multiple of WTM * TM");
static_assert(WNITER >= 1 && WN % (WTN * TN) == 0, "WN must be a multiple of WTN * TN");
static_assert(TN % 4 == 0, "TN must be a multiple of 4 (float4 reads of B and stores of C)");
static_assert(TM == 2 || TM % 4 == 0, "TM must be 2 or a multiple of 4 (vector reads of A)");
static_assert(BK % 4 == 0, "BK must be a multiple of 4 (float4 loads of A)");
static_assert(PAD % 4 == 0, "PAD must keep the rows of As 16-byte aligned");
static_assert(A_LOADS >= 1 && (BM * BK / 4) % THREADS == 0, "the A tile must split evenly over the threads");
static_assert(B_LOADS >= 1 && (BK * BN / 4) % THREADS == 0, "the B tile must split evenly over the threads");
static_assert(STAGES >= 1 && (ASYNC == 1 || STAGES <= 2), "plain loads buffer one or two tiles");
static_assert(ASYNC == 0 || STAGES >= 2, "cp.async needs at least two stages");
static_assert(SPLITK >= 1 && GROUP >= 1, "SPLITK and GROUP are at least 1");

#if ASYNC
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
__device__ __forceinline__ void copy16(float *smem, const float *gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void copy4(float *smem, const float *gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_pending() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#else
#error ASYNC=1 (cp.async) needs sm_80 or newer
#endif
#endif

// Issues the copies of the A tile at (row m0, column k) into `as` (transposed) and of the B
// tile at (row k, column n0) into `bs`, with cp.async.
#if ASYNC
__device__ __forceinline__ void issue(float *as, float *bs, const float *__restrict__ A,
                                      const float *__restrict__ B, int K, int N, int m0, int n0,
                                      int k, int tid) {
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BK / 4), col = (idx % (BK / 4)) * 4;
        const float *src = A + (size_t)(m0 + row) * K + k + col;
#pragma unroll
        for (int j = 0; j < 4; j++)
            copy4(as + (col + j) * LDA + row, src + j);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
        copy16(bs + row * BN + col, B + (size_t)(k + row) * N + n0 + col);
    }
}
#else
// Loads the A and B tiles into registers (float4 each).
__device__ __forceinline__ void fetch(float4 (&ra)[A_LOADS], float4 (&rb)[B_LOADS],
                                      const float *__restrict__ A, const float *__restrict__ B,
                                      int K, int N, int m0, int n0, int k, int tid) {
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BK / 4), col = (idx % (BK / 4)) * 4;
        ra[i] = *reinterpret_cast<const float4 *>(A + (size_t)(m0 + row) * K + k + col);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
        rb[i] = *reinterpret_cast<const float4 *>(B + (size_t)(k + row) * N + n0 + col);
    }
}

// Stores the registers of `fetch` into shared memory, A transposed.
__device__ __forceinline__ void store(float *as, float *bs, const float4 (&ra)[A_LOADS],
                                      const float4 (&rb)[B_LOADS], int tid) {
#pragma unroll
    for (int i = 0; i < A_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BK / 4), col = (idx % (BK / 4)) * 4;
        as[(col + 0) * LDA + row] = ra[i].x;
        as[(col + 1) * LDA + row] = ra[i].y;
        as[(col + 2) * LDA + row] = ra[i].z;
        as[(col + 3) * LDA + row] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; i++) {
        const int idx = tid + i * THREADS;
        const int row = idx / (BN / 4), col = (idx % (BN / 4)) * 4;
        *reinterpret_cast<float4 *>(bs + row * BN + col) = rb[i];
    }
}
#endif

// Multiplies the BK-deep tiles in `as` and `bs` into the lane's accumulators.
__device__ __forceinline__ void multiply(float (&acc)[WMITER * TM][WNITER * TN], const float *as,
                                         const float *bs, int wm0, int wn0) {
#pragma unroll
    for (int k = 0; k < BK; k++) {
        float a[WMITER * TM], b[WNITER * TN];
#pragma unroll
        for (int i = 0; i < WMITER; i++) {
            const float *p = as + k * LDA + wm0 + i * WTM * TM;
#if TM == 2
            const float2 v = *reinterpret_cast<const float2 *>(p);
            a[i * TM] = v.x;
            a[i * TM + 1] = v.y;
#else
#pragma unroll
            for (int t = 0; t < TM; t += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(p + t);
                a[i * TM + t] = v.x;
                a[i * TM + t + 1] = v.y;
                a[i * TM + t + 2] = v.z;
                a[i * TM + t + 3] = v.w;
            }
#endif
        }
#pragma unroll
        for (int j = 0; j < WNITER; j++) {
#pragma unroll
            for (int t = 0; t < TN; t += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(bs + k * BN + wn0 + j * WTN * TN + t);
                b[j * TN + t] = v.x;
                b[j * TN + t + 1] = v.y;
                b[j * TN + t + 2] = v.z;
                b[j * TN + t + 3] = v.w;
            }
        }
#pragma unroll
        for (int r = 0; r < WMITER * TM; r++)
#pragma unroll
            for (int c = 0; c < WNITER * TN; c++)
                acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
}

// The row of C (within the block tile) of accumulator row r, and the column of column c.
#define ROW(r) (wm0 + ((r) / TM) * WTM * TM + (r) % TM)
#define COL(c) (wn0 + ((c) / TN) * WTN * TN + (c) % TN)

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm(const int M, const int N, const int K, const float *__restrict__ A,
      const float *__restrict__ B, float *__restrict__ C, float *__restrict__ W,
      unsigned *__restrict__ FLAGS) {
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;

    // The block's tile, in groups of GROUP block rows.
    int bm = blockIdx.y, bn = blockIdx.x;
#if GROUP > 1
    {
        const int rows = gridDim.y, cols = gridDim.x;
        const int pid = blockIdx.y * cols + blockIdx.x;
        const int first = (pid / (GROUP * cols)) * GROUP;
        const int size = min(rows - first, GROUP);
        bm = first + (pid % (GROUP * cols)) % size;
        bn = (pid % (GROUP * cols)) / size;
    }
#endif
    const int m0 = bm * BM, n0 = bn * BN;
    const int wm0 = (warp / (BN / WN)) * WM + (lane / WTN) * TM;
    const int wn0 = (warp % (BN / WN)) * WN + (lane % WTN) * TN;

    const int k_len = K / SPLITK, k_begin = blockIdx.z * k_len;
    const int tiles = k_len / BK;

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int r = 0; r < WMITER * TM; r++)
#pragma unroll
        for (int c = 0; c < WNITER * TN; c++)
            acc[r][c] = 0.0f;

#if ASYNC
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles)
            issue(smem + s * STAGE, smem + s * STAGE + A_TILE, A, B, K, N, m0, n0, k_begin + s * BK, tid);
        commit();
    }
    for (int t = 0; t < tiles; t++) {
        wait_pending<STAGES - 2>();
        __syncthreads();
        const int next = t + STAGES - 1;
        if (next < tiles) {
            float *buf = smem + (next % STAGES) * STAGE;
            issue(buf, buf + A_TILE, A, B, K, N, m0, n0, k_begin + next * BK, tid);
        }
        commit();
        const float *cur = smem + (t % STAGES) * STAGE;
        multiply(acc, cur, cur + A_TILE, wm0, wn0);
    }
#else
    float4 ra[A_LOADS], rb[B_LOADS];
    fetch(ra, rb, A, B, K, N, m0, n0, k_begin, tid);
    store(smem, smem + A_TILE, ra, rb, tid);
    __syncthreads();
    for (int t = 0; t < tiles; t++) {
#if STAGES == 2
        // The next tile into registers while this one is computed, then into the other buffer.
        if (t + 1 < tiles)
            fetch(ra, rb, A, B, K, N, m0, n0, k_begin + (t + 1) * BK, tid);
        const float *cur = smem + (t % 2) * STAGE;
        multiply(acc, cur, cur + A_TILE, wm0, wn0);
        if (t + 1 < tiles) {
            float *buf = smem + ((t + 1) % 2) * STAGE;
            store(buf, buf + A_TILE, ra, rb, tid);
        }
        __syncthreads();
#else
        multiply(acc, smem, smem + A_TILE, wm0, wn0);
        if (t + 1 < tiles) {
            fetch(ra, rb, A, B, K, N, m0, n0, k_begin + (t + 1) * BK, tid);
            __syncthreads();
            store(smem, smem + A_TILE, ra, rb, tid);
            __syncthreads();
        }
#endif
    }
#endif

#if SPLITK == 1
#pragma unroll
    for (int r = 0; r < WMITER * TM; r++)
#pragma unroll
        for (int c = 0; c < WNITER * TN; c += 4)
            *reinterpret_cast<float4 *>(C + (size_t)(m0 + ROW(r)) * N + n0 + COL(c)) =
                make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]);
#else
    // Split-K: the partial tile to the workspace; the last block of the tile to arrive sums.
    const size_t plane = (size_t)M * N;
#pragma unroll
    for (int r = 0; r < WMITER * TM; r++)
#pragma unroll
        for (int c = 0; c < WNITER * TN; c += 4)
            *reinterpret_cast<float4 *>(W + blockIdx.z * plane + (size_t)(m0 + ROW(r)) * N + n0 + COL(c)) =
                make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]);
    __threadfence();
    __syncthreads();
    __shared__ int last;
    unsigned *flag = FLAGS + blockIdx.y * gridDim.x + blockIdx.x;
    if (tid == 0)
        last = atomicAdd(flag, 1u) == SPLITK - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
#pragma unroll
    for (int r = 0; r < WMITER * TM; r++)
#pragma unroll
        for (int c = 0; c < WNITER * TN; c += 4) {
            const size_t at = (size_t)(m0 + ROW(r)) * N + n0 + COL(c);
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int s = 0; s < SPLITK; s++) {
                const float4 p = s == (int)blockIdx.z
                                     ? make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3])
                                     : __ldcg(reinterpret_cast<const float4 *>(W + s * plane + at));
                sum.x += p.x;
                sum.y += p.y;
                sum.z += p.z;
                sum.w += p.w;
            }
            *reinterpret_cast<float4 *>(C + at) = sum;
        }
    if (tid == 0)
        *flag = 0;
#endif
}
