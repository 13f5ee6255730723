//! # Device properties in constraints
//!
//! A constraint may name a property of the device a kernel runs on as `device.<property>`, e.g.
//! `smem_bytes <= device.max_shared_memory_per_block`. The names are a fixed list
//! ([`DEVICE_PROPERTIES`]): any other `device.` name is an error where the constraint is
//! compiled (a compile error in `#[tunable]`).
//!
//! A space built with a [`DeviceProperties`] table ([`SpaceBuilder::device`](crate::SpaceBuilder::device),
//! [`Space::on_device`](crate::Space::on_device)) treats each property as the constant the table
//! gives, so the constraint prunes the space before anything compiles. Without a table (at
//! compile time, in a replay of a cache, or for a property the table lacks), a property is
//! *unbound*, and every conjunct of a constraint that reads an unbound property holds: the
//! space is then the widest one the other constraints allow, and what exceeds the device is
//! rejected by the device itself (a launch over its limits fails, and the tuner records that
//! configuration as failed). The space's identity ([`Space::fingerprint`](crate::Space::fingerprint))
//! covers the constraint text, not the table, so a configuration tuned and stored on one device
//! stays valid for the kernel's space anywhere.
//!
//! ```
//! use tunable_search::SpaceBuilder;
//! use tunable_search::space::DeviceProperties;
//!
//! let b = SpaceBuilder::new()
//!     .param("tile", [16, 32, 64, 128])
//!     .constraint("tile * tile * 4 <= device.max_shared_memory_per_block");
//! // Unbound: the constraint holds.
//! assert_eq!(b.clone().build().unwrap().len(), 4);
//! let small = DeviceProperties::new().with("max_shared_memory_per_block", 48 * 1024).unwrap();
//! assert_eq!(b.device(small).build().unwrap().len(), 3);
//! ```

use crate::SpaceError;
pub use crate::space::device_property::DEVICE_PROPERTIES;

/// The values of some [`DEVICE_PROPERTIES`] for one device: what a backend reads from the
/// device, or a table written by hand (tests, an offline compile for a known architecture).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceProperties {
    values: Vec<(&'static str, i64)>,
}

impl DeviceProperties {
    /// An empty table: every property unbound.
    pub fn new() -> Self {
        Self::default()
    }

    /// The table with `name` (one of [`DEVICE_PROPERTIES`], without `device.`) set to `value`;
    /// an unknown name is [`SpaceError::UnknownDeviceProperty`].
    pub fn with(mut self, name: &str, value: i64) -> Result<Self, SpaceError> {
        let Some(&(name, _)) = DEVICE_PROPERTIES.iter().find(|(n, _)| *n == name) else {
            return Err(SpaceError::UnknownDeviceProperty {
                name: name.to_owned(),
            });
        };
        self.values.retain(|(n, _)| *n != name);
        self.values.push((name, value));
        Ok(self)
    }

    /// The value of `name` (without `device.`), if the table has it.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SpaceBuilder;
    use crate::expr::ExprErrorKind;

    /// A fake device: 1024 threads, 100 KB of shared memory, compute capability 8.0.
    fn fake() -> DeviceProperties {
        DeviceProperties::new()
            .with("max_threads_per_block", 1024)
            .and_then(|d| d.with("max_shared_memory_per_block", 100_000))
            .and_then(|d| d.with("compute_capability", 80))
            .unwrap()
    }

    fn builder() -> SpaceBuilder {
        SpaceBuilder::new()
            .param("threads", [128, 256, 512, 1024, 2048])
            .param("tile", [32, 64, 128, 256])
            .param("async_copy", [0, 1])
            .constraint("threads <= device.max_threads_per_block")
            .constraint("2 * tile * tile * 4 <= device.max_shared_memory_per_block")
            .constraint("async_copy == 0 or device.compute_capability >= 90")
    }

    #[test]
    fn a_device_table_prunes_the_space_and_unbound_properties_hold() {
        let unbound = builder().build().unwrap();
        assert_eq!(unbound.len(), 5 * 4 * 2);
        let bound = builder().device(fake()).build().unwrap();
        // threads <= 1024: 4 of 5; 8 * tile^2 <= 100000: tile <= 64 (2 of 4); sm_80: no async.
        assert_eq!(bound.len(), 4 * 2);
        for pos in 0..bound.len() {
            let v = bound.values(pos);
            assert!(v[0].as_f64().unwrap() <= 1024.0 && v[1].as_f64().unwrap() <= 64.0);
            assert_eq!(v[2].as_f64(), Some(0.0));
        }
        // The same space rebound from the unbound one, and the same identity.
        let rebound = unbound.on_device(&fake()).unwrap();
        assert_eq!(rebound.len(), bound.len());
        assert_eq!(rebound.fingerprint(), unbound.fingerprint());
        // A property the table lacks is unbound: only the others prune.
        let partial = DeviceProperties::new()
            .with("compute_capability", 90)
            .unwrap();
        assert_eq!(builder().device(partial).build().unwrap().len(), 40);
    }

    #[test]
    fn only_the_conjunct_that_reads_an_unbound_property_holds() {
        let b = SpaceBuilder::new()
            .param("x", 0..10)
            .constraint("2 <= x <= device.max_threads_per_block and x % 2 == 0");
        // Unbound: `x <= device...` holds; `2 <= x` and `x % 2 == 0` still prune.
        assert_eq!(b.clone().build().unwrap().len(), 4);
        let d = DeviceProperties::new()
            .with("max_threads_per_block", 5)
            .unwrap();
        assert_eq!(b.device(d).build().unwrap().len(), 2);
    }

    #[test]
    fn an_unknown_property_is_an_error_with_the_closest_name() {
        let e = SpaceBuilder::new()
            .param("x", [1, 2])
            .constraint("x <= device.max_shared_mem_per_block")
            .build()
            .unwrap_err();
        let SpaceError::Constraint { error, .. } = e else {
            panic!("{e}")
        };
        assert_eq!(
            error.kind,
            ExprErrorKind::UnknownDeviceProperty {
                name: "device.max_shared_mem_per_block".into(),
                suggestion: Some("device.max_shared_memory_per_block".into()),
            }
        );
        assert_eq!((error.span.start, error.span.end), (5, 36));
        assert!(DeviceProperties::new().with("warp", 32).is_err());
    }
}
