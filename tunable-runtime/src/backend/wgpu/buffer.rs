//! # wgpu buffers
//!
//! Storage buffers of a device: uploaded once by the caller before tuning, bound to the kernel
//! in binding order, read back for verification ([`crate::verify::Output`]).

use super::error::WgpuError;
use super::{Inner, Wgpu};
use crate::backend::Element;
use crate::verify::Output;
use std::marker::PhantomData;
use std::sync::Arc;

/// A storage buffer of `len` elements of `T` on a [`Wgpu`] device (usable as
/// `var<storage, read>` or `var<storage, read_write>`).
pub struct Buffer<T: Element + bytemuck::Pod> {
    pub(super) buffer: wgpu::Buffer,
    len: usize,
    pub(super) gpu: Arc<Inner>,
    _element: PhantomData<T>,
}

impl<T: Element + bytemuck::Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device", &self.gpu.id)
            .finish()
    }
}

/// The buffer's size in bytes: wgpu copies whole 4-byte words, and a binding cannot be empty.
fn padded(bytes: usize) -> u64 {
    (bytes.max(4).div_ceil(4) * 4) as u64
}

impl Wgpu {
    /// A buffer of `len` elements, zero-filled.
    pub fn alloc<T: Element + bytemuck::Pod>(&self, len: usize) -> Result<Buffer<T>, WgpuError> {
        self.upload(&vec![T::default(); len])
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Element + bytemuck::Pod>(&self, data: &[T]) -> Result<Buffer<T>, WgpuError> {
        let bytes = std::mem::size_of_val(data);
        let device = &self.inner.device;
        let (buffer, error) = super::scoped(device, || {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tunable buffer"),
                size: padded(bytes),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        if let Some(reason) = error {
            return Err(WgpuError::Api {
                call: "create_buffer",
                reason,
            });
        }
        let mut b = Buffer {
            buffer,
            len: data.len(),
            gpu: Arc::clone(&self.inner),
            _element: PhantomData,
        };
        b.write(data)?;
        Ok(b)
    }
}

impl<T: Element + bytemuck::Pod> Buffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The wgpu buffer, for work of the caller's own.
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// Overwrites the buffer with `data`, which must have [`len`](Self::len) elements; the
    /// write is done when this returns.
    pub fn write(&mut self, data: &[T]) -> Result<(), WgpuError> {
        if data.len() != self.len {
            return Err(WgpuError::Api {
                call: "write_buffer",
                reason: format!("{} elements for a buffer of {}", data.len(), self.len),
            });
        }
        let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
        bytes.resize(padded(bytes.len()) as usize, 0);
        let gpu = &self.gpu;
        let ((), error) = super::scoped(&gpu.device, || {
            gpu.queue.write_buffer(&self.buffer, 0, &bytes);
            gpu.queue.submit([]);
        });
        if let Some(reason) = error {
            return Err(WgpuError::Api {
                call: "write_buffer",
                reason,
            });
        }
        wait(gpu, "write_buffer")
    }

    /// The buffer's contents (after the work submitted before).
    pub fn read(&self) -> Result<Vec<T>, WgpuError> {
        let gpu = &self.gpu;
        let device = &gpu.device;
        let size = padded(std::mem::size_of::<T>() * self.len);
        let api = |call| move |reason| WgpuError::Api { call, reason };
        let (staging, error) = super::scoped(device, || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tunable read-back"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, size);
            gpu.queue.submit([encoder.finish()]);
            staging
        });
        if let Some(reason) = error {
            return Err(api("copy_buffer_to_buffer")(reason));
        }
        let bytes = map_read(gpu, &staging).map_err(api("map_async"))?;
        let used = std::mem::size_of::<T>() * self.len;
        Ok(bytemuck::pod_collect_to_vec(&bytes[..used]))
    }
}

/// Waits for everything submitted to the device.
pub(super) fn wait(gpu: &Inner, call: &'static str) -> Result<(), WgpuError> {
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(drop)
        .map_err(|e| WgpuError::Api {
            call,
            reason: e.to_string(),
        })
}

/// The bytes of a `MAP_READ` buffer, once the work submitted before has finished.
pub(super) fn map_read(gpu: &Inner, buffer: &wgpu::Buffer) -> Result<Vec<u8>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| e.to_string())?;
    // `poll` has run the callback of the finished work.
    let mapped = rx.recv().map_err(|e| e.to_string())?;
    mapped.map_err(|e| e.to_string())?;
    let bytes = buffer
        .get_mapped_range(..)
        .map_err(|e| e.to_string())?
        .to_vec();
    buffer.unmap();
    Ok(bytes)
}

impl<T: Element + bytemuck::Pod> Output for Buffer<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let v = self.read().map_err(|e| e.to_string())?;
        crate::backend::element::widen_into(&v, out);
        Ok(())
    }
}
