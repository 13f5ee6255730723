//! # Loading space definitions
//!
//! Two file formats:
//! - **spaces JSON** (`../shared/data/spaces/*.json`): `tune_params` (name to value list, in
//!   order), `restrictions` (constraint strings), optional `max_threads`, `expected_valid`, `name`;
//! - **Kernel Tuner T1** (`*.t1.json`): `ConfigurationSpace.TuningParameters[]` with `Name`,
//!   `Type` and `Values`, which may be a JSON list or a Python expression (list literals, `+`,
//!   `list(range(a, b, step))`, comprehensions such as `[2**i for i in range(0, 6)]`), and
//!   `ConfigurationSpace.Conditions[].Expression`.
//!
//! [`load`] tells them apart by content.

use super::{SpaceBuilder, Value};
use crate::SpaceError;
use crate::expr::interp::{PyVal, eval};
use crate::expr::{ExprError, ExprErrorKind, Span, parse};
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

/// The file formats [`load`] understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Our spaces JSON.
    SpacesJson,
    /// A Kernel Tuner T1 input file.
    T1,
}

/// A loaded definition, ready to build.
#[derive(Clone, Debug)]
pub struct SpaceFile {
    /// The space's name (from the file, or its stem).
    pub name: String,
    /// Which format it was.
    pub format: Format,
    /// Parameters, constraints and options.
    pub builder: SpaceBuilder,
    /// The valid count the file expects, if it states one.
    pub expected_valid: Option<u64>,
}

/// Reads a spaces JSON or T1 file.
pub fn load(path: impl AsRef<Path>) -> Result<SpaceFile, SpaceError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| SpaceError::Io {
        path: path.into(),
        source,
    })?;
    parse_definition(&text, path)
}

/// Parses a definition from text; `path` is used for names and messages only.
pub fn parse_definition(text: &str, path: &Path) -> Result<SpaceFile, SpaceError> {
    let json: Json = serde_json::from_str(text).map_err(|source| SpaceError::Json {
        path: path.into(),
        source,
    })?;
    let obj = json
        .as_object()
        .ok_or_else(|| format_err(path, "the top level is not an object"))?;
    if obj.contains_key("ConfigurationSpace") {
        from_t1(obj, path)
    } else {
        from_spaces_json(obj, path)
    }
}

fn format_err(path: &Path, msg: impl Into<String>) -> SpaceError {
    SpaceError::Format {
        path: PathBuf::from(path),
        message: msg.into(),
    }
}

fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.trim_end_matches(".json")
        .trim_end_matches(".t1")
        .to_owned()
}

fn from_spaces_json(obj: &Map<String, Json>, path: &Path) -> Result<SpaceFile, SpaceError> {
    let params = obj
        .get("tune_params")
        .and_then(Json::as_object)
        .ok_or_else(|| {
            format_err(
                path,
                "missing object 'tune_params' (or 'ConfigurationSpace' for a T1 file)",
            )
        })?;
    let name = obj
        .get("name")
        .and_then(Json::as_str)
        .map_or_else(|| stem(path), str::to_owned);
    let mut b = SpaceBuilder::new().name(&name);
    for (pname, vals) in params {
        let list = vals
            .as_array()
            .ok_or_else(|| format_err(path, format!("tune_params.{pname} is not a list")))?;
        let values = list
            .iter()
            .map(|v| {
                Value::from_json(v).ok_or_else(|| {
                    format_err(path, format!("tune_params.{pname}: unsupported value {v}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        b = b.param(pname, values);
    }
    if let Some(r) = obj.get("restrictions") {
        let list = r
            .as_array()
            .ok_or_else(|| format_err(path, "'restrictions' is not a list"))?;
        for (i, c) in list.iter().enumerate() {
            let s = c
                .as_str()
                .ok_or_else(|| format_err(path, format!("restrictions[{i}] is not a string")))?;
            b = b.constraint(s);
        }
    }
    if let Some(m) = obj.get("max_threads").filter(|m| !m.is_null()) {
        b = b.max_threads(
            m.as_i64()
                .ok_or_else(|| format_err(path, "'max_threads' is not an integer"))?,
        );
    }
    let expected_valid = obj.get("expected_valid").and_then(Json::as_u64);
    Ok(SpaceFile {
        name,
        format: Format::SpacesJson,
        builder: b,
        expected_valid,
    })
}

fn from_t1(obj: &Map<String, Json>, path: &Path) -> Result<SpaceFile, SpaceError> {
    let cs = obj["ConfigurationSpace"]
        .as_object()
        .ok_or_else(|| format_err(path, "'ConfigurationSpace' is not an object"))?;
    let name = obj
        .get("General")
        .and_then(|g| g.get("BenchmarkName"))
        .and_then(Json::as_str)
        .map_or_else(|| stem(path), str::to_owned);
    let mut b = SpaceBuilder::new().name(&name);
    let params = cs
        .get("TuningParameters")
        .and_then(Json::as_array)
        .ok_or_else(|| format_err(path, "missing list ConfigurationSpace.TuningParameters"))?;
    for (i, p) in params.iter().enumerate() {
        let pname = p.get("Name").and_then(Json::as_str).ok_or_else(|| {
            format_err(path, format!("TuningParameters[{i}] has no string 'Name'"))
        })?;
        let ty = p.get("Type").and_then(Json::as_str).unwrap_or("");
        let raw = match p.get("Values") {
            Some(Json::String(expr)) => {
                t1_values(expr).map_err(|error| SpaceError::ParamValues {
                    path: path.into(),
                    param: pname.to_owned(),
                    error: Box::new(error),
                })?
            }
            Some(Json::Array(list)) => list
                .iter()
                .map(|v| {
                    Value::from_json(v)
                        .ok_or_else(|| format_err(path, format!("{pname}: unsupported value {v}")))
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => {
                return Err(format_err(
                    path,
                    format!("TuningParameters[{i}] ('{pname}') has no 'Values'"),
                ));
            }
        };
        let values = raw
            .into_iter()
            .map(|v| {
                cast(v, ty).ok_or_else(|| {
                    format_err(
                        path,
                        format!("{pname}: a value does not fit its Type '{ty}'"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        b = b.param(pname, values);
    }
    if let Some(conds) = cs.get("Conditions") {
        let list = conds
            .as_array()
            .ok_or_else(|| format_err(path, "ConfigurationSpace.Conditions is not a list"))?;
        for (i, c) in list.iter().enumerate() {
            let e = c.get("Expression").and_then(Json::as_str).ok_or_else(|| {
                format_err(path, format!("Conditions[{i}] has no string 'Expression'"))
            })?;
            b = b.constraint(e);
        }
    }
    Ok(SpaceFile {
        name,
        format: Format::T1,
        builder: b,
        expected_valid: None,
    })
}

/// Converts a value to a T1 `Type` (`int`, `float`, `bool`, `str`/`string`; anything else keeps it).
fn cast(v: Value, ty: &str) -> Option<Value> {
    match (ty, v) {
        ("int", Value::Int(i)) => Some(Value::Int(i)),
        ("int", Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9e15 => {
            Some(Value::Int(f as i64))
        }
        ("float", Value::Int(i)) => Some(Value::Float(i as f64)),
        ("float", Value::Float(f)) => Some(Value::Float(f)),
        ("bool", Value::Bool(b)) => Some(Value::Bool(b)),
        ("str" | "string", Value::Str(s)) => Some(Value::Str(s)),
        ("str" | "string", other) => Some(Value::Str(other.to_string())),
        ("int" | "float" | "bool", _) => None,
        (_, v) => Some(v),
    }
}

/// Evaluates a T1 `Values` expression to a list of scalars.
pub fn t1_values(expr: &str) -> Result<Vec<Value>, ExprError> {
    let ast = parse(expr)?;
    let unsupported = |msg: &str, span: Span| {
        ExprError::new(ExprErrorKind::Unsupported(msg.to_owned()), span, expr)
    };
    let mut bad_name = None;
    ast.visit_names(&mut |n, s| {
        bad_name.get_or_insert((n.to_owned(), s));
    });
    if let Some((n, s)) = bad_name {
        return Err(unsupported(
            &format!("parameter values cannot refer to '{n}'"),
            s,
        ));
    }
    match eval(&ast, expr, &|_| None)? {
        PyVal::List(items) => items
            .iter()
            .map(|v| {
                v.to_value().ok_or_else(|| {
                    unsupported("values must be numbers, booleans or strings", ast.span)
                })
            })
            .collect(),
        _ => Err(unsupported("parameter values must be a list", ast.span)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t1_value_expressions() {
        let v = t1_values("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))").unwrap();
        assert_eq!(v.len(), 5 + 32);
        assert_eq!(
            t1_values("[2**i for i in range(0, 6)]").unwrap().last(),
            Some(&Value::Int(32))
        );
        let e = t1_values("[x for i in range(3)]").unwrap_err();
        assert!(e.message().contains("'x'"), "{}", e.message());
        assert!(t1_values("range(3)").is_ok());
        assert!(t1_values("7").is_err());
        assert!(t1_values("[[1], 2]").is_err());
        assert!(t1_values("sorted([1])").is_err());
    }

    #[test]
    fn format_errors_name_the_problem() {
        let e = parse_definition("{\"tune_params\": {\"a\": 3}}", Path::new("x.json")).unwrap_err();
        assert!(e.to_string().contains("tune_params.a is not a list"), "{e}");
        let e = parse_definition("[1]", Path::new("x.json")).unwrap_err();
        assert!(e.to_string().contains("not an object"));
        let e = parse_definition("{", Path::new("x.json")).unwrap_err();
        assert!(matches!(e, SpaceError::Json { .. }));
    }
}
