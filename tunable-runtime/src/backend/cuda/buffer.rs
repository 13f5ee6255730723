//! # CUDA buffers
//!
//! Device memory on a [`Cuda`] device's stream: uploaded once by the caller before tuning,
//! passed to kernels, read back for verification ([`crate::verify::Output`]).

use super::error::CudaError;
use super::{Cuda, code};
use crate::backend::Element;
use crate::verify::Output;
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
use std::sync::{Arc, Mutex};

/// A buffer of elements of `T` on a [`Cuda`] device.
pub struct Buffer<T: Element + DeviceRepr> {
    pub(super) slice: CudaSlice<T>,
    stream: Arc<CudaStream>,
    /// Page-locked host memory the tuner's reads of this buffer reuse
    /// ([`Output::snapshot_into`]), made on the first read: a copy into pageable memory goes
    /// through the driver's staging buffer at a fraction of the bus's speed, and a fresh vector
    /// per read costs a page fault per page.
    pinned: Mutex<Option<PinnedHostSlice<T>>>,
}

impl<T: Element + DeviceRepr> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.slice.len())
            .finish()
    }
}

impl Cuda {
    /// A buffer of `len` elements, zero-filled.
    pub fn alloc<T: Element + DeviceRepr>(&self, len: usize) -> Result<Buffer<T>, CudaError> {
        self.upload(&vec![T::default(); len])
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Element + DeviceRepr>(&self, data: &[T]) -> Result<Buffer<T>, CudaError> {
        let stream = Arc::clone(&self.inner.stream);
        let slice = stream.clone_htod(data).map_err(|e| CudaError::Api {
            call: "cuMemcpyHtoD",
            code: code(e),
        })?;
        Ok(Buffer {
            slice,
            stream,
            pinned: Mutex::new(None),
        })
    }
}

impl<T: Element + DeviceRepr> Buffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// Overwrites the buffer with `data`, which must have [`len`](Self::len) elements.
    pub fn write(&mut self, data: &[T]) -> Result<(), CudaError> {
        if data.len() != self.len() {
            return Err(CudaError::Api {
                call: "cuMemcpyHtoD",
                code: format!("{} elements for a buffer of {}", data.len(), self.len()),
            });
        }
        self.stream
            .memcpy_htod(data, &mut self.slice)
            .map_err(|e| CudaError::Api {
                call: "cuMemcpyHtoD",
                code: code(e),
            })
    }

    /// The buffer's contents (after the work queued before it).
    pub fn read(&self) -> Result<Vec<T>, CudaError> {
        self.stream
            .clone_dtoh(&self.slice)
            .map_err(|e| CudaError::Api {
                call: "cuMemcpyDtoH",
                code: code(e),
            })
    }
}

impl<T: Element + DeviceRepr + ValidAsZeroBits> Output for Buffer<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let api = |e| {
            CudaError::Api {
                call: "cuMemcpyDtoH",
                code: code(e),
            }
            .to_string()
        };
        let mut pinned = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
        if pinned.as_ref().is_none_or(|p| p.len() != self.len()) {
            // Flags 0: cached page-locked memory (the write-combined kind that `alloc_pinned`
            // makes is slow to read from the host).
            // SAFETY: the memory is only read after the copy below has filled all of it.
            match unsafe { self.stream.context().alloc_pinned_with_flags(self.len(), 0) } {
                Ok(p) => *pinned = Some(p),
                // Out of page-locked memory: read through pageable memory instead.
                Err(_) => {
                    let v = self.read().map_err(|e| e.to_string())?;
                    crate::backend::element::widen_into(&v, out);
                    return Ok(());
                }
            }
        }
        let host = pinned.as_mut().expect("allocated above");
        self.stream.memcpy_dtoh(&self.slice, host).map_err(api)?;
        // Waits for the copy.
        let data = host.as_slice().map_err(api)?;
        crate::backend::element::widen_into(data, out);
        Ok(())
    }
}
