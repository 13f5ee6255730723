//! # Strategy specs
//!
//! On the command line a strategy is `name[:key=value]...`, e.g. `genetic`,
//! `genetic:popsize=30:mutation_chance=8`, `diff_evo:constraint_aware=false`. Each strategy's
//! options validate their values ([`Configure`]); mistakes are [`StrategyError`]s that name the
//! option. A value may hold whole specs in brackets, e.g.
//! `ensemble:members=[annealing+genetic:popsize=20]`: colons inside brackets do not separate
//! options.

use super::options::Configure;
use std::str::FromStr;

/// Why a strategy could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StrategyError {
    /// The name is not a known strategy.
    #[error("unknown strategy '{name}' (known: {known})")]
    UnknownStrategy {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// The strategy has no such option.
    #[error("strategy '{strategy}' has no option '{key}' (options: {known})")]
    UnknownOption {
        /// The strategy.
        strategy: String,
        /// The option given.
        key: String,
        /// Its options.
        known: String,
    },
    /// An option's value is malformed or out of range.
    #[error("strategy '{strategy}': option {key}={value}: {reason}")]
    BadValue {
        /// The strategy.
        strategy: String,
        /// The option.
        key: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The spec itself does not parse.
    #[error("bad strategy spec '{spec}': {reason}")]
    BadSpec {
        /// The spec.
        spec: String,
        /// What is wrong.
        reason: String,
    },
}

/// A strategy name with options, as written on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrategySpec {
    /// The strategy's name.
    pub name: String,
    /// `key=value` options in the order given.
    pub options: Vec<(String, String)>,
}

impl FromStr for StrategySpec {
    type Err = StrategyError;

    fn from_str(s: &str) -> Result<Self, StrategyError> {
        let bad = |reason: &str| StrategyError::BadSpec {
            spec: s.to_owned(),
            reason: reason.to_owned(),
        };
        if s.chars().filter(|&c| c == '[').count() != s.chars().filter(|&c| c == ']').count() {
            return Err(bad("unbalanced brackets"));
        }
        let parts = split_top_level(s, ':');
        let mut parts = parts.into_iter();
        let name = parts.next().unwrap_or("").trim();
        if name.is_empty() {
            return Err(bad("missing strategy name"));
        }
        let mut options = Vec::new();
        for part in parts {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad(&format!("option '{part}' is not key=value")))?;
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() || v.is_empty() {
                return Err(bad(&format!("option '{part}' is not key=value")));
            }
            if options.iter().any(|(o, _): &(String, String)| o == k) {
                return Err(bad(&format!("option '{k}' given twice")));
            }
            options.push((k.to_owned(), v.to_owned()));
        }
        Ok(StrategySpec {
            name: name.to_owned(),
            options,
        })
    }
}

impl std::fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        for (k, v) in &self.options {
            write!(f, ":{k}={v}")?;
        }
        Ok(())
    }
}

/// A spec given as an option's value (a wrapper's `member`): one spec, in brackets if it has
/// options of its own.
pub(crate) fn member_spec(value: &str) -> Result<StrategySpec, String> {
    let inner = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    inner.parse().map_err(|e: StrategyError| e.to_string())
}

/// Splits `s` at every `sep` outside brackets.
pub(crate) fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

impl StrategySpec {
    /// Applies the spec's options to `opts`.
    pub fn apply<T: Configure>(&self, mut opts: T) -> Result<T, StrategyError> {
        for (k, v) in &self.options {
            opts.set(k, v).map_err(|e| match e {
                None => StrategyError::UnknownOption {
                    strategy: self.name.clone(),
                    key: k.clone(),
                    known: T::KEYS.join(", "),
                },
                Some(reason) => StrategyError::BadValue {
                    strategy: self.name.clone(),
                    key: k.clone(),
                    value: v.clone(),
                    reason,
                },
            })?;
        }
        Ok(opts)
    }

    pub(crate) fn expect_no_options(&self) -> Result<(), StrategyError> {
        match self.options.first() {
            None => Ok(()),
            Some((k, _)) => Err(StrategyError::UnknownOption {
                strategy: self.name.clone(),
                key: k.clone(),
                known: "none".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print() {
        let s: StrategySpec = "genetic:popsize=30:constraint_aware=false".parse().unwrap();
        assert_eq!(s.name, "genetic");
        assert_eq!(s.options.len(), 2);
        assert_eq!(s.to_string(), "genetic:popsize=30:constraint_aware=false");
        assert!("".parse::<StrategySpec>().is_err());
        assert!("genetic:popsize".parse::<StrategySpec>().is_err());
        assert!("genetic:a=1:a=2".parse::<StrategySpec>().is_err());
        let e: StrategySpec = "ensemble:members=[mls+genetic:popsize=8]:weights=2+1"
            .parse()
            .unwrap();
        assert_eq!(
            e.options,
            [
                ("members".into(), "[mls+genetic:popsize=8]".into()),
                ("weights".into(), "2+1".into())
            ]
        );
        assert_eq!(
            e.to_string(),
            "ensemble:members=[mls+genetic:popsize=8]:weights=2+1"
        );
        assert!("ensemble:members=[mls".parse::<StrategySpec>().is_err());
    }
}
