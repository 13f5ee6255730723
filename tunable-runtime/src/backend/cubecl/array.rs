//! # Device arrays
//!
//! A buffer on the CubeCL device with its length, which is what makes handing it to a kernel
//! safe: [`Array::arg`] gives the kernel the length the buffer was made with.

use super::{CubeclError, Inner, message};
use crate::backend::Element;
use crate::verify::Output;
use cubecl::CubeElement;
use cubecl::prelude::BufferArg;
use cubecl::server::Handle;
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` elements of `T` on a CubeCL device, for a kernel's `&[T]` or `&mut [T]` argument.
pub struct Array<T> {
    gpu: Arc<Inner>,
    handle: Handle,
    len: usize,
    element: PhantomData<T>,
}

impl<T> std::fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Element + CubeElement> Array<T> {
    pub(super) fn upload(gpu: Arc<Inner>, data: &[T]) -> Array<T> {
        let handle = gpu.client.create_from_slice(T::as_bytes(data));
        Array {
            gpu,
            handle,
            len: data.len(),
            element: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The array as a kernel's slice argument, to call inside the closure of
    /// [`CubeCl::launch`](super::CubeCl::launch): the launch then checks that the kernel wrote
    /// it, which is how a launch that failed on the device is told apart from one that ran.
    pub fn arg(&self) -> BufferArg {
        self.gpu
            .bound
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.handle.clone());
        // SAFETY: the handle holds exactly `len` elements of `T`: it was made from them.
        unsafe { BufferArg::from_raw_parts(self.handle.clone(), self.len) }
    }

    /// The elements, read back from the device.
    pub fn read(&self) -> Result<Vec<T>, CubeclError> {
        let bytes =
            self.gpu
                .client
                .read_one(self.handle.clone())
                .map_err(|e| CubeclError::Api {
                    call: "read",
                    reason: message(&e),
                })?;
        Ok(T::from_bytes(&bytes).to_vec())
    }

    /// Replaces the contents with `data` (of any length).
    pub fn write(&mut self, data: &[T]) {
        self.handle = self.gpu.client.create_from_slice(T::as_bytes(data));
        self.len = data.len();
    }
}

impl<T: Element + CubeElement> Output for Array<T> {
    fn snapshot(&self) -> Result<Vec<f64>, String> {
        self.read()
            .map(|v| v.into_iter().map(Element::to_f64).collect())
            .map_err(|e| e.to_string())
    }

    fn snapshot_into(&self, out: &mut Vec<f64>) -> Result<(), String> {
        let bytes = self
            .gpu
            .client
            .read_one(self.handle.clone())
            .map_err(|e| message(&e))?;
        crate::backend::element::widen_into(T::from_bytes(&bytes), out);
        Ok(())
    }
}
