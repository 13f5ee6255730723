//! # Parameter values
//!
//! A tunable parameter takes values of one kind: integers, floats, booleans or strings
//! (categorical). Integers and floats may mix in one parameter (both are numbers, as in Python).

use serde::{Deserialize, Serialize};
use std::fmt;

/// One value of a tunable parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A categorical value.
    Str(String),
}

/// The kind of a parameter's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueKind {
    /// Integers only.
    Int,
    /// Numbers with at least one float.
    Float,
    /// Booleans.
    Bool,
    /// Strings.
    Str,
}

impl Value {
    /// The kind of this single value.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Bool(_) => ValueKind::Bool,
            Value::Int(_) => ValueKind::Int,
            Value::Float(_) => ValueKind::Float,
            Value::Str(_) => ValueKind::Str,
        }
    }

    /// The value as a float, for numbers and booleans.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(_) => None,
        }
    }
}

impl Value {
    /// A scalar JSON value as a parameter value (`None` for arrays, objects and null).
    pub(crate) fn from_json(v: &serde_json::Value) -> Option<Value> {
        use serde_json::Value as Json;
        match v {
            Json::Bool(b) => Some(Value::Bool(*b)),
            Json::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_f64().map(Value::Float)),
            Json::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// Formats like Python's `str()`, which is how Kernel Tuner writes configurations in its cache
    /// keys: `16`, `0.5`, `1.0`, `True`, `abc`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 => {
                write!(f, "{x:.1}")
            }
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_python_str() {
        assert_eq!(Value::Int(16).to_string(), "16");
        assert_eq!(Value::Float(1.0).to_string(), "1.0");
        assert_eq!(Value::Float(0.5).to_string(), "0.5");
        assert_eq!(Value::Bool(true).to_string(), "True");
        assert_eq!(Value::from("x").to_string(), "x");
    }

    #[test]
    fn serde_is_untagged() {
        let v: Vec<Value> = serde_json::from_str(r#"[1, 2.5, true, "a"]"#).unwrap();
        assert_eq!(
            v,
            vec![
                Value::Int(1),
                Value::Float(2.5),
                Value::Bool(true),
                Value::from("a")
            ]
        );
    }
}
