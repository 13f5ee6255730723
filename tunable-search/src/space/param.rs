//! # Parameters
//!
//! A named tunable parameter with its values in declared order. Checked on creation: at least one
//! value, no value twice, one kind of value (integers and floats may mix).

use super::value::{Value, ValueKind};
use crate::SpaceError;
use serde::{Deserialize, Serialize};

/// A tunable parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    name: String,
    values: Vec<Value>,
    kind: ValueKind,
}

impl Param {
    /// Checks and creates a parameter.
    ///
    /// ```
    /// use tunable_search::space::{Param, Value};
    /// let p = Param::new("tile", vec![Value::Int(1), Value::Int(2)]).unwrap();
    /// assert_eq!(p.values().len(), 2);
    /// assert!(Param::new("tile", vec![]).is_err());
    /// ```
    pub fn new(name: impl Into<String>, values: Vec<Value>) -> Result<Self, SpaceError> {
        let name = name.into();
        if !is_identifier(&name) {
            return Err(SpaceError::BadParamName { name });
        }
        let Some(first) = values.first() else {
            return Err(SpaceError::EmptyParam { name });
        };
        if values.len() > usize::from(u16::MAX) {
            return Err(SpaceError::TooManyValues {
                name,
                count: values.len(),
            });
        }
        let numeric = |k| matches!(k, ValueKind::Int | ValueKind::Float);
        let mut kind = first.kind();
        for v in &values {
            let k = v.kind();
            if k != kind && !(numeric(k) && numeric(kind)) {
                return Err(SpaceError::MixedKinds {
                    name,
                    first: format!("{first:?}"),
                    other: format!("{v:?}"),
                });
            }
            if k == ValueKind::Float {
                kind = ValueKind::Float;
            }
        }
        for (i, v) in values.iter().enumerate() {
            let same = |w: &Value| match (v.as_f64(), w.as_f64()) {
                (Some(a), Some(b)) if kind != ValueKind::Bool => a == b,
                _ => v == w,
            };
            if values[..i].iter().any(same) {
                return Err(SpaceError::DuplicateValue {
                    name,
                    value: v.to_string(),
                });
            }
        }
        Ok(Param { name, values, kind })
    }

    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its values in declared order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The kind of its values (`Float` if any value is a float).
    pub fn kind(&self) -> ValueKind {
        self.kind
    }

    /// The index of `value` among the values, comparing numbers by value (`2 == 2.0`).
    pub fn index_of(&self, value: &Value) -> Option<u16> {
        self.values
            .iter()
            .position(|v| match (v.as_f64(), value.as_f64()) {
                (Some(a), Some(b))
                    if self.kind != ValueKind::Bool && value.kind() != ValueKind::Bool =>
                {
                    a == b
                }
                _ => v == value,
            })
            .map(|i| i as u16)
    }
}

/// Whether `name` is a name of the constraint language (a parameter's, a metric's): an ASCII
/// letter or `_`, then ASCII letters, digits or `_`.
pub(crate) fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
