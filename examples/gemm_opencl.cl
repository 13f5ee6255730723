// Tiled SGEMM, C = A * B, row-major, after CLBlast's xgemm parameters.
//
// A is M x K, B is K x N, C is M x N; M, N and K are multiples of MWG, NWG and KWG.
// A work-group of NDIMC x MDIMC work-items (dimension 0 runs along N, the contiguous one)
// computes an MWG x NWG tile of C, stepping through K by KWG. Each work-item computes
// MWI = MWG / MDIMC rows and NWI = NWG / NDIMC columns, the columns as NWI / VWN vectors of
// VWN floats (strided by NDIMC vectors, so neighbouring work-items touch neighbouring memory).
//
// Parameters (each given as -DNAME=value):
//   MWG, NWG, KWG   tile of C per work-group, and the K step
//   MDIMC, NDIMC    work-group size along M and N
//   VWN             vector width of the loads of B and the stores of C (1, 2, 4, 8)
//   SA, SB          1: stage the KWG x MWG tile of A / KWG x NWG tile of B in local memory
//
// Valid when MWG % MDIMC == 0 and NWG % (NDIMC * VWN) == 0.

#define MWI (MWG / MDIMC)
#define NVW (NWG / (NDIMC * VWN))

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if VWN == 1
typedef float realN;
#define VLOAD(index, p) ((p)[index])
#define VSTORE(value, index, p) ((p)[index] = (value))
#else
typedef CAT(float, VWN) realN;
#define VLOAD(index, p) CAT(vload, VWN)(index, p)
#define VSTORE(value, index, p) CAT(vstore, VWN)(value, index, p)
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const int M, const int N, const int K,
          __global const float *restrict A,
          __global const float *restrict B,
          __global float *restrict C) {
    const int tn = get_local_id(0);
    const int tm = get_local_id(1);
    const int tid = tm * NDIMC + tn;
    const int gn = get_group_id(0) * NWG;
    const int gm = get_group_id(1) * MWG;
    const int nv = N / VWN;  // vectors per row of B and C

#if SA
    __local float Al[KWG * MWG];           // [k][m]
#endif
#if SB
    __local realN Bl[KWG * (NWG / VWN)];   // [k][vector along n]
#endif

    realN acc[MWI][NVW];
    for (int wm = 0; wm < MWI; wm++)
        for (int wv = 0; wv < NVW; wv++)
            acc[wm][wv] = (realN)(0.0f);

    for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA
        for (int i = tid; i < KWG * MWG; i += MDIMC * NDIMC) {
            const int m = i / KWG, k = i % KWG;  // consecutive work-items read along a row of A
            Al[k * MWG + m] = A[(gm + m) * K + k0 + k];
        }
#endif
#if SB
        for (int i = tid; i < KWG * (NWG / VWN); i += MDIMC * NDIMC) {
            const int k = i / (NWG / VWN), v = i % (NWG / VWN);
            Bl[k * (NWG / VWN) + v] = VLOAD((k0 + k) * nv + gn / VWN + v, B);
        }
#endif
#if SA || SB
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        for (int k = 0; k < KWG; k++) {
            float a[MWI];
            realN b[NVW];
            for (int wm = 0; wm < MWI; wm++) {
#if SA
                a[wm] = Al[k * MWG + tm + wm * MDIMC];
#else
                a[wm] = A[(gm + tm + wm * MDIMC) * K + k0 + k];
#endif
            }
            for (int wv = 0; wv < NVW; wv++) {
#if SB
                b[wv] = Bl[k * (NWG / VWN) + tn + wv * NDIMC];
#else
                b[wv] = VLOAD((k0 + k) * nv + gn / VWN + tn + wv * NDIMC, B);
#endif
            }
            for (int wm = 0; wm < MWI; wm++)
                for (int wv = 0; wv < NVW; wv++)
                    acc[wm][wv] = mad((realN)(a[wm]), b[wv], acc[wm][wv]);
        }
#if SA || SB
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }

    for (int wm = 0; wm < MWI; wm++)
        for (int wv = 0; wv < NVW; wv++)
            VSTORE(acc[wm][wv], (gm + tm + wm * MDIMC) * nv + gn / VWN + tn + wv * NDIMC, C);
}
