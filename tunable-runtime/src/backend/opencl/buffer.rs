//! # OpenCL buffers
//!
//! Device memory of a context: uploaded once by the caller before tuning, passed to the kernel
//! as arguments, read back for verification ([`crate::verify::Output`]).

use super::error::OpenClError;
use super::{Inner, OpenCl, code};
use crate::backend::Element;
use crate::verify::Output;
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::types::{CL_BLOCKING, cl_mem};
use std::sync::{Arc, Mutex};

/// A buffer of `len` elements of `T` on an [`OpenCl`] device.
pub struct Buffer<T: Element> {
    pub(super) mem: ClBuffer<T>,
    len: usize,
    cl: Arc<Inner>,
    /// Host memory the tuner's reads of this buffer reuse ([`Output::snapshot_into`]): a fresh
    /// vector per read costs a page fault per page.
    scratch: Mutex<Vec<T>>,
}

impl<T: Element> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("device", &self.cl.id)
            .finish()
    }
}

impl OpenCl {
    /// A buffer of `len` elements, zero-filled.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>, OpenClError> {
        self.upload(&vec![T::default(); len])
    }

    /// A buffer holding a copy of `data` (a blocking copy).
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>, OpenClError> {
        let api = |call| {
            move |e| OpenClError::Api {
                call,
                code: code(e),
            }
        };
        // SAFETY: no host pointer is passed; the size is `data.len()` elements of `T`.
        let mem = unsafe {
            ClBuffer::<T>::create(
                &self.inner.context,
                CL_MEM_READ_WRITE,
                data.len(),
                std::ptr::null_mut(),
            )
        }
        .map_err(api("clCreateBuffer"))?;
        let mut b = Buffer {
            mem,
            len: data.len(),
            cl: Arc::clone(&self.inner),
            scratch: Mutex::new(Vec::new()),
        };
        b.write(data)?;
        Ok(b)
    }
}

impl<T: Element> Buffer<T> {
    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Overwrites the buffer with `data`, which must have [`len`](Self::len) elements.
    pub fn write(&mut self, data: &[T]) -> Result<(), OpenClError> {
        if data.len() != self.len {
            return Err(OpenClError::Api {
                call: "clEnqueueWriteBuffer",
                code: format!("{} elements for a buffer of {}", data.len(), self.len),
            });
        }
        // SAFETY: a blocking write of exactly the buffer's size from a live slice.
        unsafe {
            self.cl
                .queue
                .enqueue_write_buffer(&mut self.mem, CL_BLOCKING, 0, data, &[])
        }
        .map(drop)
        .map_err(|e| OpenClError::Api {
            call: "clEnqueueWriteBuffer",
            code: code(e),
        })
    }

    /// The buffer's contents (a blocking read, after the work queued before it).
    pub fn read(&self) -> Result<Vec<T>, OpenClError> {
        let mut out = vec![T::default(); self.len];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Reads the buffer into `out`, which has [`len`](Self::len) elements.
    fn read_into(&self, out: &mut [T]) -> Result<(), OpenClError> {
        debug_assert_eq!(out.len(), self.len);
        // SAFETY: a blocking read of exactly the buffer's size into live, initialized memory of
        // that size.
        unsafe {
            self.cl
                .queue
                .enqueue_read_buffer(&self.mem, CL_BLOCKING, 0, out, &[])
        }
        .map(drop)
        .map_err(|e| OpenClError::Api {
            call: "clEnqueueReadBuffer",
            code: code(e),
        })
    }

    pub(super) fn handle(&self) -> cl_mem {
        self.mem.get()
    }

    pub(super) fn context(&self) -> &Arc<Inner> {
        &self.cl
    }
}

impl<T: Element> Output for Buffer<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        scratch.resize(self.len, T::default());
        self.read_into(&mut scratch).map_err(|e| e.to_string())?;
        crate::backend::element::widen_into(&scratch, out);
        Ok(())
    }
}
