// Both tunable parameters of the kernel are overrides.
override block_size_x: u32 = 64;
override unrolled: u32 = 1;

@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(block_size_x)
fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
    y[id.x] *= 2.0;
}
