//! # Python's non-finite numbers
//!
//! Kernel Tuner writes its caches with Python's `json`, which spells non-finite floats as bare
//! `NaN`, `Infinity` and `-Infinity`: not JSON. [`replace_non_finite`] makes them `null` before
//! a whole file ([`super::text`]) or a single line ([`super::salvage`]) is parsed.

use std::borrow::Cow;

/// Replaces the bare tokens `NaN`, `Infinity` and `-Infinity` (outside strings) by `null`.
pub(super) fn replace_non_finite(text: &str) -> Cow<'_, str> {
    const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let (mut out, mut copied) = (String::new(), 0);
    let (mut in_string, mut escaped) = (false, false);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            (in_string, escaped) = match (escaped, b) {
                (true, _) => (true, false),
                (false, b'\\') => (true, true),
                (false, b'"') => (false, false),
                _ => (true, false),
            };
        } else if b == b'"' {
            in_string = true;
        } else if let Some(tok) = TOKENS.iter().find(|t| bytes[i..].starts_with(t.as_bytes())) {
            // Bytes, not `text[i..]`: `i` may be inside a character outside any string (a
            // damaged file), and the tokens are ASCII, so a match starts on a boundary.
            out.push_str(&text[copied..i]);
            out.push_str("null");
            i += tok.len();
            copied = i;
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}
