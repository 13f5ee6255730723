//! # Launching
//!
//! `kernel.launch(dims).arg(..)...run()`: binds the arguments in order (`@group(0)
//! @binding(0)`, `@binding(1)`, ...), dispatches `dims.grid` workgroups inside an error scope,
//! waits (within the time limit) and reports the timestamp-query time, or the wall-clock time
//! where the device has no timestamps, to the measurement. Every failure is a [`WgpuError`]
//! naming the configuration.

use super::buffer::{Buffer, map_read};
use super::compile::CompiledKernel;
use super::error::WgpuError;
use super::scoped;
use crate::backend::{Dims, Element};
use crate::measure::{report_compile_time, report_device_time};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

mod sealed {
    /// What one argument binds.
    pub enum Binding<'a> {
        /// A storage buffer, and the address of the device it belongs to.
        Storage(&'a wgpu::Buffer, usize),
        /// A scalar's bytes, bound as a uniform buffer.
        Uniform([u8; 16]),
    }

    pub trait Sealed {
        fn binding(&self) -> Binding<'_>;
    }
}
use sealed::Binding;

/// A value that can be bound to a kernel: a [`Buffer`] (a `var<storage>` binding) or a 32-bit
/// number (`u32`, `i32`, `f32`: a `var<uniform>` binding of that type).
pub trait KernelArg: sealed::Sealed {}

impl<T: Element + bytemuck::Pod> sealed::Sealed for Buffer<T> {
    fn binding(&self) -> Binding<'_> {
        Binding::Storage(&self.buffer, Arc::as_ptr(&self.gpu) as usize)
    }
}

impl<T: Element + bytemuck::Pod> KernelArg for Buffer<T> {}

macro_rules! uniform_arg {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {
            fn binding(&self) -> Binding<'_> {
                let mut bytes = [0u8; 16];
                bytes[..4].copy_from_slice(&self.to_ne_bytes());
                Binding::Uniform(bytes)
            }
        }
        impl KernelArg for $t {}
    )*};
}

uniform_arg!(u32, i32, f32);

/// A launch being set up: [`CompiledKernel::launch`], then one [`arg`](Launch::arg) per
/// binding of group 0 in binding order, then [`run`](Launch::run).
pub struct Launch<'a> {
    kernel: &'a CompiledKernel,
    dims: Dims,
    args: Vec<Binding<'a>>,
    foreign: Option<usize>,
}

impl std::fmt::Debug for Launch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("kernel", &self.kernel)
            .field("dims", &self.dims)
            .field("args", &self.args.len())
            .finish()
    }
}

impl CompiledKernel {
    /// A launch of `dims.grid` workgroups; `dims.block` must be the shader's workgroup size
    /// with this configuration's overrides ([`workgroup_size`](Self::workgroup_size)).
    pub fn launch(&self, dims: Dims) -> Launch<'_> {
        Launch {
            kernel: self,
            dims,
            args: Vec::new(),
            foreign: None,
        }
    }
}

impl<'a> Launch<'a> {
    /// Binds the next argument (`@group(0) @binding(i)` for the `i`-th); a buffer stays
    /// borrowed until the launch has run.
    pub fn arg<A: KernelArg + ?Sized>(mut self, a: &'a A) -> Self {
        let b = a.binding();
        if let Binding::Storage(_, device) = b
            && device != Arc::as_ptr(&self.kernel.gpu) as usize
        {
            self.foreign.get_or_insert(self.args.len());
        }
        self.args.push(b);
        self
    }

    /// Runs the dispatch and waits for it; reports its time to the measurement
    /// ([`report_device_time`]).
    pub fn run(self) -> Result<(), WgpuError> {
        let k = self.kernel;
        let gpu = &k.gpu;
        let config = || k.config.clone();
        let dims = self.dims;
        if let Some(reason) = gpu.lost() {
            return Err(WgpuError::DeviceLost {
                config: config(),
                reason,
            });
        }
        if let Some(i) = self.foreign {
            return Err(WgpuError::Launch {
                config: config(),
                reason: format!("argument {i} is a buffer of another wgpu device"),
            });
        }
        if let Some(reason) = dims.empty_reason() {
            return Err(WgpuError::EmptyLaunch {
                config: config(),
                reason,
            });
        }
        let block = dims.block.map(|b| u32::try_from(b).unwrap_or(u32::MAX));
        if block != k.compiled.workgroup {
            return Err(WgpuError::Workgroup {
                config: config(),
                block,
                workgroup: k.compiled.workgroup,
            });
        }
        let max = gpu.limits.max_workgroups_per_dimension;
        let mut grid = [1u32; 3];
        for (d, axis) in ["x", "y", "z"].iter().enumerate() {
            if dims.grid[d] > max as usize {
                return Err(WgpuError::Limit {
                    config: config(),
                    what: format!("workgroups in dimension {axis}"),
                    value: dims.grid[d] as u64,
                    max: max.into(),
                });
            }
            grid[d] = dims.grid[d] as u32;
        }
        let timer = gpu.timer.lock().unwrap_or_else(|e| e.into_inner());
        let device = &gpu.device;
        let launched = Instant::now();
        let (submission, error) = scoped(device, || {
            let uniforms: Vec<Option<wgpu::Buffer>> = self
                .args
                .iter()
                .map(|a| match a {
                    Binding::Uniform(bytes) => {
                        let u = device.create_buffer(&wgpu::BufferDescriptor {
                            label: Some("tunable scalar"),
                            size: 16,
                            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: false,
                        });
                        gpu.queue.write_buffer(&u, 0, bytes);
                        Some(u)
                    }
                    Binding::Storage(..) => None,
                })
                .collect();
            let entries: Vec<wgpu::BindGroupEntry<'_>> = self
                .args
                .iter()
                .zip(&uniforms)
                .enumerate()
                .map(|(i, (a, u))| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: match (a, u) {
                        (Binding::Storage(b, _), _) => b.as_entire_binding(),
                        (_, Some(u)) => u.as_entire_binding(),
                        (Binding::Uniform(_), None) => unreachable!("every uniform has a buffer"),
                    },
                })
                .collect();
            let bind_group = (!entries.is_empty()).then(|| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(k.name),
                    layout: &k.compiled.pipeline.get_bind_group_layout(0),
                    entries: &entries,
                })
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some(k.name),
            });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(k.name),
                    timestamp_writes: timer.as_ref().map(|t| wgpu::ComputePassTimestampWrites {
                        query_set: &t.queries,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }),
                });
                pass.set_pipeline(&k.compiled.pipeline);
                if let Some(g) = &bind_group {
                    pass.set_bind_group(0, g, &[]);
                }
                pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
            }
            if let Some(t) = timer.as_ref() {
                encoder.resolve_query_set(&t.queries, 0..2, &t.resolve, 0);
                encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.readback, 0, 16);
            }
            gpu.queue.submit([encoder.finish()])
        });
        if let Some(reason) = error {
            // Whatever was submitted must finish before the next variant runs.
            let _ = device.poll(wgpu::PollType::wait_indefinitely());
            return Err(WgpuError::Launch {
                config: config(),
                reason,
            });
        }
        let first = !k.compiled.launched.swap(true, Ordering::Relaxed);
        let limit = if first { None } else { k.timeout };
        let waited = device.poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: limit,
        });
        let wall_ms = launched.elapsed().as_secs_f64() * 1e3;
        match waited {
            Ok(_) => {}
            Err(wgpu::PollError::Timeout) => {
                // wgpu cannot cancel a dispatch: let it finish, so that the next variant starts
                // on an idle device.
                let _ = device.poll(wgpu::PollType::wait_indefinitely());
                return Err(WgpuError::Timeout {
                    config: config(),
                    limit: limit.unwrap_or_default(),
                });
            }
            Err(e) => {
                return Err(WgpuError::Launch {
                    config: config(),
                    reason: e.to_string(),
                });
            }
        }
        if let Some(reason) = gpu.lost() {
            return Err(WgpuError::DeviceLost {
                config: config(),
                reason,
            });
        }
        if let Some(reason) = gpu.uncaptured() {
            return Err(WgpuError::Launch {
                config: config(),
                reason,
            });
        }
        let device_ms = match timer.as_ref() {
            Some(t) => {
                let bytes = map_read(gpu, &t.readback).map_err(|reason| WgpuError::Launch {
                    config: config(),
                    reason: format!("reading the timestamps: {reason}"),
                })?;
                let stamp = |at: usize| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&bytes[at..at + 8]);
                    u64::from_le_bytes(b)
                };
                let (start, end) = (stamp(0), stamp(8));
                // A device whose timestamps are not usable (zero, or going backwards): the
                // wall clock instead.
                if end > start {
                    (end - start) as f64 * t.period / 1e6
                } else {
                    wall_ms
                }
            }
            None => wall_ms,
        };
        report_device_time(device_ms);
        if first {
            // Drivers may compile the pipeline at its first dispatch (lavapipe does).
            report_compile_time(((wall_ms - device_ms) / 1e3).max(0.0));
        }
        Ok(())
    }
}
