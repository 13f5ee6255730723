//! # Kernel names
//!
//! A kernel's name becomes part of file names: its tuned file `tuned/<kernel>.bin`, its device
//! binaries in `tuned/<kernel>.artifacts/`, its journals `tuned/<kernel>-<key>-<hash>.cache.json`,
//! the `<kernel>.space` record of the last build, and what `cargo tunable study export` writes.
//! So a name is an identifier, checked by [`check`] wherever one enters (the `#[tunable]`
//! attribute, the command line, a Kernel Tuner cache's `kernel_name`, a study, a tuned file) and
//! again by every function that builds one of those paths:
//!
//! - 1 to [`MAX_LEN`] (128) characters;
//! - the first an ASCII letter or `_`, the others ASCII letters, digits, `_` or `-`.
//!
//! Every Rust function name in ASCII is one, and so are the `kernel_name`s of Kernel Tuner's
//! caches (`convolution_kernel`, `Xgemm`, `cn_pnpoly`, ...). What is refused cannot name a file
//! elsewhere than in its folder (`/`, `\`, `..`, an absolute path), hide in a listing (a leading
//! dot, control characters, bidirectional overrides such as U+202E), be empty, or be too long
//! for a file system. A function whose name is not ASCII takes a `name = "..."` that is.
//!
//! ```
//! use tunable_search::name::check;
//!
//! assert!(check("matmul_tiled").is_ok());
//! assert!(check("conv2d-v2").is_ok());
//! let err = check("../../etc/x").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "invalid kernel name \"../../etc/x\": it starts with '.'; a kernel name is 1 to 128 \
//!      characters, an ASCII letter or '_' followed by ASCII letters, digits, '_' or '-'"
//! );
//! ```
//!
//! Device names never become file names: the journal's name holds a hash of the device, the
//! artifacts' names a hash of their recipe.

use std::fmt;

/// The longest kernel name accepted, in characters (bytes: they are ASCII).
pub const MAX_LEN: usize = 128;

/// The rule, as the errors state it.
pub const RULE: &str = "a kernel name is 1 to 128 characters, an ASCII letter or '_' followed by \
                        ASCII letters, digits, '_' or '-'";

/// A kernel name that breaks the rule (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    /// The name as given, cut to 64 characters if it is longer.
    pub name: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{:?}` escapes control characters and bidirectional overrides, so the message shows
        // the name as it is, not as a terminal would render it.
        write!(
            f,
            "invalid kernel name {:?}: {}; {RULE}",
            self.name, self.reason
        )
    }
}

impl std::error::Error for NameError {}

/// Checks that `name` may name a kernel (and its files): see the [module docs](self).
pub fn check(name: &str) -> Result<(), NameError> {
    let fail = |reason: String| {
        let shown: String = name.chars().take(64).collect();
        let shown = if shown.len() < name.len() {
            format!("{shown}...")
        } else {
            shown
        };
        Err(NameError {
            name: shown,
            reason,
        })
    };
    let Some(first) = name.chars().next() else {
        return fail("it is empty".to_owned());
    };
    let len = name.chars().count();
    if len > MAX_LEN {
        return fail(format!("it is {len} characters long"));
    }
    if !(first.is_ascii_alphabetic() || first == '_') {
        return fail(format!("it starts with {first:?}"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return fail(format!("it contains {bad:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in use stay valid: function names, the `kernel_name`s of the shared Kernel
    /// Tuner caches, the examples' kernels.
    #[test]
    fn names_in_use_are_valid() {
        for name in [
            "matmul",
            "gemm_opencl",
            "Xgemm",
            "cn_pnpoly",
            "convolution_kernel",
            "dedispersion_kernel",
            "_private",
            "k",
            "conv-2d",
            &"a".repeat(MAX_LEN),
        ] {
            assert_eq!(check(name), Ok(()), "{name}");
        }
    }

    /// Names that would escape the tuned folder, hide or overflow a path are refused, each saying
    /// why.
    #[test]
    fn path_like_empty_hidden_and_long_names_are_refused() {
        let why = |n: &str| check(n).unwrap_err().reason;
        assert_eq!(why("../../../x"), "it starts with '.'");
        assert_eq!(why("/tmp/x"), "it starts with '/'");
        assert_eq!(why("a/b"), "it contains '/'");
        assert_eq!(why("a\\b"), "it contains '\\\\'");
        assert_eq!(why(""), "it is empty");
        assert_eq!(why("x\ny"), "it contains '\\n'");
        assert_eq!(why("evil\u{202e}txt"), "it contains '\\u{202e}'");
        assert_eq!(why("a.bin"), "it contains '.'");
        assert_eq!(why("1abc"), "it starts with '1'");
        assert_eq!(why("größe"), "it contains 'ö'");
        let long = "a".repeat(100_000);
        assert_eq!(why(&long), "it is 100000 characters long");
        let shown = check(&long).unwrap_err().to_string();
        assert!(shown.len() < 300, "the message shows a cut name: {shown}");
        assert!(
            check("x\u{202e}y")
                .unwrap_err()
                .to_string()
                .contains("\"x\\u{202e}y\""),
            "the override is escaped in the message"
        );
    }
}
