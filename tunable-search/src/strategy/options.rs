//! # Strategy options, declared once
//!
//! Every strategy's options struct is written with [`declare_options!`]: one entry per option
//! gives its field, type, default, documentation, key (and aliases) and parser. The macro
//! generates the struct with its field docs (each stating its default and key), `Default`, the
//! list of options in the struct docs, and [`Configure`] (`KEYS` and `set`), so the key list, the
//! parser, the defaults and the docs cannot disagree.
//!
//! A parser is any `Fn(&Options, &str) -> Result<T, String>`: it sees the options set so far (for
//! checks across options, e.g. `t_start` above `t_min`) and says what it expected when the value
//! is wrong. [`at_least`], [`checked`], [`non_negative`], [`probability`], [`boolean`] and
//! [`choice`] cover the common cases.

use std::fmt::Display;
use std::str::FromStr;

/// Options a strategy accepts from a spec.
pub trait Configure {
    /// The option names, for messages.
    const KEYS: &'static [&'static str];
    /// Sets one option; `Err(None)` for an unknown key, `Err(Some(reason))` for a bad value.
    fn set(&mut self, key: &str, value: &str) -> Result<(), Option<String>>;
}

/// An integer at least `min` ("expected an integer >= `min`").
pub(crate) fn at_least<O, T>(min: T) -> impl Fn(&O, &str) -> Result<T, String>
where
    T: FromStr + PartialOrd + Display,
{
    move |_, v| match v.parse::<T>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("expected an integer >= {min}")),
    }
}

/// A value that parses and passes `ok` ("expected `what`").
pub(crate) fn checked<O, T: FromStr>(
    what: &'static str,
    ok: impl Fn(&T) -> bool,
) -> impl Fn(&O, &str) -> Result<T, String> {
    move |_, v| match v.parse::<T>() {
        Ok(x) if ok(&x) => Ok(x),
        _ => Err(format!("expected {what}")),
    }
}

/// A finite number >= 0.
pub(crate) fn non_negative<O>() -> impl Fn(&O, &str) -> Result<f64, String> {
    checked("a finite number >= 0", |x: &f64| x.is_finite() && *x >= 0.0)
}

/// A probability, in `[0, 1]`.
pub(crate) fn probability<O>() -> impl Fn(&O, &str) -> Result<f64, String> {
    checked("a probability in [0, 1]", |p: &f64| (0.0..=1.0).contains(p))
}

/// `true` / `false` (also `1` / `0`, `yes` / `no`).
pub(crate) fn boolean<O>() -> impl Fn(&O, &str) -> Result<bool, String> {
    |_, v| match v {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err("expected true or false".to_owned()),
    }
}

/// One of the named values ("expected a, b or c").
pub(crate) fn choice<O, T: Copy>(
    names: &'static [(&'static str, T)],
) -> impl Fn(&O, &str) -> Result<T, String> {
    move |_, v| {
        if let Some(&(_, x)) = names.iter().find(|(n, _)| *n == v) {
            return Ok(x);
        }
        let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        Err(match all.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                format!("expected {} or {last}", rest.join(", "))
            }
            _ => format!("expected {}", all.join("")),
        })
    }
}

/// Declares a strategy's options struct; see the [module docs](self).
///
/// ```text
/// declare_options! {
///     /// Options of [`Example`].
///     #[derive(Clone, Debug, PartialEq)]
///     pub struct ExampleOptions {
///         /// Population size.
///         popsize: usize = 14, "popsize" => at_least(2);
///         /// Differential weight.
///         f: f64 = 1.3, "F" | "f" => checked("a number in [0, 2]", |x| (0.0..=2.0).contains(x));
///         /// Set by `method` (no key of its own).
///         crossover: Kind = Kind::Bin;
///     }
///     more keys {
///         /// Sets `crossover` and another field at once.
///         "method" => |o: &mut ExampleOptions, v: &str| -> Result<(), String> { ... };
///     }
/// }
/// ```
macro_rules! declare_options {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $field:ident : $ty:ty = $default:expr
                $(, $key:literal $(| $alias:literal)* => $parse:expr)?
                ;
            )*
        }
        $(
            more keys {
                $(
                    $(#[doc = $xdoc:literal])*
                    $xkey:literal => $setter:expr;
                )*
            }
        )?
    ) => {
        $(#[$meta])*
        ///
        /// # Options
        ///
        /// Each `key=value` of a spec sets one of them (`Default` gives the defaults):
        $(
            $(
                #[doc = concat!(
                    "- `", $key, "`", $(" (or `", $alias, "`)",)*
                    ": [`", stringify!($field), "`](Self::", stringify!($field),
                    "), default `", stringify!($default), "`"
                )]
            )?
        )*
        $(
            $(
                #[doc = concat!("- `", $xkey, "`:", $($xdoc),*)]
            )*
        )?
        pub struct $name {
            $(
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = concat!(
                    "Default: `", stringify!($default), "`"
                    $(, "; option `", $key, "`")?, "."
                )]
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)*
                }
            }
        }

        impl $crate::strategy::options::Configure for $name {
            const KEYS: &'static [&'static str] = &[$($($key,)?)* $($($xkey,)*)?];

            fn set(&mut self, key: &str, value: &str) -> Result<(), Option<String>> {
                match key {
                    $(
                        $(
                            $key $(| $alias)* => {
                                self.$field = ($parse)(&*self, value).map_err(Some)?;
                            }
                        )?
                    )*
                    $(
                        $(
                            $xkey => ($setter)(self, value).map_err(Some)?,
                        )*
                    )?
                    _ => return Err(None),
                }
                Ok(())
            }
        }
    };
}
pub(crate) use declare_options;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Kind {
        A,
        B,
    }

    declare_options! {
        /// Options of a test.
        #[derive(Clone, Debug, PartialEq)]
        pub struct TestOptions {
            /// A size.
            size: usize = 3, "size" | "n" => at_least(2);
            /// A kind.
            kind: Kind = Kind::A, "kind" => choice(&[("a", Kind::A), ("b", Kind::B)]);
            /// A rate below `cap`.
            rate: f64 = 0.5, "rate" => |o: &TestOptions, v: &str| {
                let r = checked("a number", |x: &f64| x.is_finite())(o, v)?;
                if r < o.cap { Ok(r) } else { Err(format!("must be below cap = {}", o.cap)) }
            };
            /// A cap, set with `rate_and_cap` only.
            cap: f64 = 1.0;
            /// A switch.
            on: bool = true, "on" => boolean();
        }
        more keys {
            /// Sets the rate and the cap.
            "rate_and_cap" => |o: &mut TestOptions, v: &str| -> Result<(), String> {
                let x = checked("a positive number", |x: &f64| *x > 0.0)(&*o, v)?;
                (o.rate, o.cap) = (x / 2.0, x);
                Ok(())
            };
        }
    }

    #[test]
    fn declared_options_parse_validate_and_list_their_keys() {
        assert_eq!(
            TestOptions::KEYS,
            ["size", "kind", "rate", "on", "rate_and_cap"]
        );
        let mut o = TestOptions::default();
        assert_eq!(
            (o.size, o.kind, o.rate, o.cap, o.on),
            (3, Kind::A, 0.5, 1.0, true)
        );
        for (k, v) in [
            ("n", "5"),
            ("kind", "b"),
            ("on", "no"),
            ("rate_and_cap", "4"),
        ] {
            o.set(k, v).unwrap();
        }
        assert_eq!(
            (o.size, o.kind, o.rate, o.cap, o.on),
            (5, Kind::B, 2.0, 4.0, false)
        );
        assert_eq!(
            o.set("size", "1"),
            Err(Some("expected an integer >= 2".into()))
        );
        assert_eq!(o.set("kind", "c"), Err(Some("expected a or b".into())));
        assert_eq!(
            o.set("on", "maybe"),
            Err(Some("expected true or false".into()))
        );
        assert_eq!(
            o.set("rate", "5"),
            Err(Some("must be below cap = 4".into()))
        );
        assert_eq!(
            o.set("rate_and_cap", "-1"),
            Err(Some("expected a positive number".into()))
        );
        assert_eq!(o.set("nope", "1"), Err(None));
    }
}
