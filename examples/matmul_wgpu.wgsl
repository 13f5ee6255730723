// c = a * b for row-major n x n matrices, n a multiple of `tile`. Each workgroup computes a
// tile x tile block of c with block_size_x x block_size_y invocations, each accumulating
// (tile / block_size_y) x (tile / block_size_x) outputs (at most MAX_OUTPUTS); the tiles of a
// and b it multiplies are staged in workgroup memory, sized by the override.
override tile: u32 = 16;
override block_size_x: u32 = 16;
override block_size_y: u32 = 16;

const MAX_OUTPUTS: u32 = 64u;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;

var<workgroup> tile_a: array<f32, tile * tile>;
var<workgroup> tile_b: array<f32, tile * tile>;

@compute @workgroup_size(block_size_x, block_size_y)
fn matmul(@builtin(workgroup_id) group: vec3<u32>,
          @builtin(local_invocation_id) local: vec3<u32>) {
    let rows = tile / block_size_y;
    let cols = tile / block_size_x;
    let row0 = group.y * tile;
    let col0 = group.x * tile;
    let threads = block_size_x * block_size_y;
    let me = local.y * block_size_x + local.x;
    var acc: array<f32, MAX_OUTPUTS>;
    for (var k0 = 0u; k0 < n; k0 += tile) {
        // The workgroup loads a tile of a (rows row0.., columns k0..) and one of b (rows k0..,
        // columns col0..), each invocation a strided share of the elements.
        for (var e = me; e < tile * tile; e += threads) {
            let r = e / tile;
            let q = e % tile;
            tile_a[e] = a[(row0 + r) * n + k0 + q];
            tile_b[e] = b[(k0 + r) * n + col0 + q];
        }
        workgroupBarrier();
        for (var k = 0u; k < tile; k++) {
            for (var i = 0u; i < rows; i++) {
                let x = tile_a[(local.y + i * block_size_y) * tile + k];
                for (var j = 0u; j < cols; j++) {
                    acc[i * cols + j] += x * tile_b[k * tile + local.x + j * block_size_x];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < rows; i++) {
        for (var j = 0u; j < cols; j++) {
            c[(row0 + local.y + i * block_size_y) * n + col0 + local.x + j * block_size_x] =
                acc[i * cols + j];
        }
    }
}
