// 2D convolution (correlation) of an image with an FW x FH filter, after Kernel Tuner's
// convolution example.
//
// output is W x H; input is (W + FW - 1) x (H + FH - 1), so every output pixel has a full
// neighbourhood; filter is FW x FH. A work-group of block_size_x x block_size_y work-items computes
// a tile of (block_size_x * tile_size_x) x (block_size_y * tile_size_y) output pixels; each
// work-item computes tile_size_x x tile_size_y of them, strided by the block size.
//
// Parameters (each given as -DNAME=value):
//   block_size_x, block_size_y   work-group size
//   tile_size_x, tile_size_y     output pixels per work-item in x and y
//   use_local                    1: stage the input tile and its halo in local memory
//   use_padding                  1: pad each local-memory row by one float (bank conflicts)
// FW and FH come from the source's options.

#ifndef FW
#define FW 7
#endif
#ifndef FH
#define FH 7
#endif

#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)

__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void convolution(__global float *output, __global const float *input,
                 __constant float *filter, const int W, const int H) {
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int bx = get_group_id(0) * TILE_W, by = get_group_id(1) * TILE_H;
    const int IW = W + FW - 1, IH = H + FH - 1;

#if use_local
    #define LW (TILE_W + FW - 1)
    #define LH (TILE_H + FH - 1)
    #define LS (LW + use_padding)
    __local float tile[LH * LS];
    for (int i = ty; i < LH; i += block_size_y)
        for (int j = tx; j < LW; j += block_size_x) {
            const int gy = by + i, gx = bx + j;
            tile[i * LS + j] = (gy < IH && gx < IW) ? input[gy * IW + gx] : 0.0f;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    float sum[tile_size_y][tile_size_x];
    for (int yi = 0; yi < tile_size_y; yi++)
        for (int xi = 0; xi < tile_size_x; xi++)
            sum[yi][xi] = 0.0f;

    for (int fy = 0; fy < FH; fy++) {
        for (int fx = 0; fx < FW; fx++) {
            const float f = filter[fy * FW + fx];
            for (int yi = 0; yi < tile_size_y; yi++) {
                for (int xi = 0; xi < tile_size_x; xi++) {
                    const int ly = ty + yi * block_size_y + fy;
                    const int lx = tx + xi * block_size_x + fx;
#if use_local
                    sum[yi][xi] += tile[ly * LS + lx] * f;
#else
                    const int gy = by + ly, gx = bx + lx;
                    if (gy < IH && gx < IW)
                        sum[yi][xi] += input[gy * IW + gx] * f;
#endif
                }
            }
        }
    }

    for (int yi = 0; yi < tile_size_y; yi++)
        for (int xi = 0; xi < tile_size_x; xi++) {
            const int y = by + ty + yi * block_size_y, x = bx + tx + xi * block_size_x;
            if (y < H && x < W)
                output[y * W + x] = sum[yi][xi];
        }
}
