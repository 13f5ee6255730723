// c = a + b, tuned through two pipeline-overridable constants: the workgroup size and the
// elements each invocation adds. A workgroup covers block_size_x * per_thread consecutive
// elements; at each step its invocations touch consecutive elements.
override block_size_x: u32 = 256;
override per_thread: u32 = 1;

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(block_size_x)
fn vector_add(@builtin(workgroup_id) group: vec3<u32>,
              @builtin(local_invocation_id) local: vec3<u32>) {
    let n = arrayLength(&c);
    let first = group.x * block_size_x * per_thread + local.x;
    for (var k = 0u; k < per_thread; k++) {
        let i = first + k * block_size_x;
        if (i < n) {
            c[i] = a[i] + b[i];
        }
    }
}
