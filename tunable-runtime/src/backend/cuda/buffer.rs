//! # CUDA buffers
//!
//! Device memory on a [`Cuda`] device's stream: uploaded once by the caller before tuning,
//! passed to kernels, read back for verification ([`crate::verify::Output`]).

use super::error::CudaError;
use super::{Cuda, code};
use crate::backend::Element;
use crate::verify::Output;
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use std::sync::{Arc, Mutex};

/// A buffer of elements of `T` on a [`Cuda`] device.
pub struct Buffer<T: Element + DeviceRepr> {
    pub(super) slice: CudaSlice<T>,
    stream: Arc<CudaStream>,
    /// Host memory the tuner's reads of this buffer reuse ([`Output::snapshot_into`]): a fresh
    /// vector per read costs a page fault per page.
    scratch: Mutex<Vec<T>>,
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
            scratch: Mutex::new(Vec::new()),
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

impl<T: Element + DeviceRepr> Output for Buffer<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        scratch.resize(self.len(), T::default());
        self.stream
            .memcpy_dtoh(&self.slice, &mut scratch[..])
            .map_err(|e| {
                CudaError::Api {
                    call: "cuMemcpyDtoH",
                    code: code(e),
                }
                .to_string()
            })?;
        out.clear();
        out.extend(scratch.iter().map(|&x| x.to_f64()));
        Ok(())
    }
}
