//! # wgpu buffers
//!
//! Storage buffers of a device: uploaded once by the caller before tuning, bound to the kernel
//! in binding order, read back for verification ([`crate::verify::Output`]).

use super::error::WgpuError;
use super::{Inner, Wgpu};
use crate::backend::Element;
use crate::verify::Output;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// A storage buffer of `len` elements of `T` on a [`Wgpu`] device (usable as
/// `var<storage, read>` or `var<storage, read_write>`).
pub struct Buffer<T: Element + bytemuck::Pod> {
    pub(super) buffer: wgpu::Buffer,
    len: usize,
    pub(super) gpu: Arc<Inner>,
    /// The read-back buffer the tuner's reads of this buffer reuse ([`Output::snapshot_into`]),
    /// made on the first: a fresh one per read, and the two copies of its contents into fresh
    /// vectors, cost more than the copy itself.
    staging: Mutex<Option<wgpu::Buffer>>,
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
            staging: Mutex::new(None),
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
        self.read_with(&mut None, bytemuck::pod_collect_to_vec)
    }

    /// Copies the buffer into the read-back buffer `staging` (made first if `None`) and hands
    /// its bytes, mapped, to `f`.
    fn read_with<R>(
        &self,
        staging: &mut Option<wgpu::Buffer>,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, WgpuError> {
        let gpu = &self.gpu;
        let device = &gpu.device;
        let size = padded(std::mem::size_of::<T>() * self.len);
        let api = |call| move |reason| WgpuError::Api { call, reason };
        let ((), error) = super::scoped(device, || {
            let target = staging.get_or_insert_with(|| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("tunable read-back"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&self.buffer, 0, target, 0, size);
            gpu.queue.submit([encoder.finish()]);
        });
        if let Some(reason) = error {
            // A read-back buffer that failed is not kept.
            *staging = None;
            return Err(api("copy_buffer_to_buffer")(reason));
        }
        let target = staging.as_ref().expect("made above");
        let used = std::mem::size_of::<T>() * self.len;
        with_mapped(gpu, target, |bytes| f(&bytes[..used])).map_err(api("map_async"))
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
    with_mapped(gpu, buffer, <[u8]>::to_vec)
}

/// `f` of the bytes of a `MAP_READ` buffer, mapped once the work submitted before has finished
/// (and unmapped after).
fn with_mapped<R>(
    gpu: &Inner,
    buffer: &wgpu::Buffer,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, String> {
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
    let r = buffer
        .get_mapped_range(..)
        .map(|view| f(&view))
        .map_err(|e| e.to_string());
    buffer.unmap();
    r
}

impl<T: Element + bytemuck::Pod> Output for Buffer<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        self.read_with(&mut staging, |bytes| {
            // Mapped ranges are aligned to `wgpu::MAP_ALIGNMENT` (8 bytes), enough for every
            // element type; a copy only if not.
            match bytemuck::try_cast_slice::<u8, T>(bytes) {
                Ok(elements) => crate::backend::element::widen_into(elements, out),
                Err(_) => crate::backend::element::widen_into(
                    &bytemuck::pod_collect_to_vec::<u8, T>(bytes),
                    out,
                ),
            }
        })
        .map_err(|e| e.to_string())
    }
}
