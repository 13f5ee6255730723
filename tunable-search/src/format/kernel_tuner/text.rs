//! # Cache text
//!
//! From a file to JSON: gzip, Python's non-finite tokens, caches left unclosed, and lines that
//! do not parse ([`super::salvage`]). A file, or what its gzip stream expands to, of more than
//! [`MAX_TEXT`] bytes is refused, so that neither a huge file nor a gzip bomb exhausts memory.

use super::non_finite::replace_non_finite;
use super::salvage::by_lines;
use super::{CacheError, MAX_TEXT, Skipped, format_err};
use serde_json::Value as Json;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

/// Reads a file as text, decompressing gzip; a gzip stream cut short keeps what it decoded.
pub(super) fn read_text(path: &Path) -> Result<String, CacheError> {
    let io_err = |source| CacheError::Io {
        path: path.into(),
        source,
    };
    let too_large = || {
        format_err(
            path,
            format!("larger than {MAX_TEXT} bytes (decompressed), the most a cache may have"),
        )
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_TEXT + 1).read_to_end(&mut bytes))
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_TEXT {
        return Err(too_large());
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut gz = flate2::read::GzDecoder::new(&bytes[..]).take(MAX_TEXT + 1);
        match gz.read_to_end(&mut out) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => {}
            Err(e) => return Err(io_err(e)),
        }
        if out.len() as u64 > MAX_TEXT {
            return Err(too_large());
        }
        bytes = out;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        // Cut inside a multi-byte character: keep the complete prefix.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| format_err(path, "the file is not UTF-8"))
        }
        Err(_) => Err(format_err(path, "the file is not UTF-8")),
    }
}

/// A parsed document: the JSON, whether it had to be repaired (unclosed, cut short), and the
/// lines skipped because they did not parse.
pub(super) type Parsed = (Json, bool, Vec<Skipped>);

/// Parses JSON, accepting Python's `NaN`/`Infinity`, repairing an unclosed cache and skipping
/// lines that do not parse: of the line-by-line reading ([`by_lines`]) and the cut back to the
/// last complete record, the one keeping more records is taken (a cache written one record per
/// line loses its bad lines only; a pretty-printed one cut short keeps what precedes the cut).
pub(super) fn parse_json(text: &str, path: &Path) -> Result<Parsed, CacheError> {
    let first = match serde_json::from_str(text) {
        Ok(json) => return Ok((json, false, Vec::new())),
        Err(e) => e,
    };
    let fixed = replace_non_finite(text);
    if let Cow::Owned(fixed) = &fixed
        && let Ok(json) = serde_json::from_str(fixed)
    {
        return Ok((json, false, Vec::new()));
    }
    let records = |j: &Json| {
        j.get("cache")
            .and_then(Json::as_object)
            .map_or(0, |c| c.len())
    };
    let lines = by_lines(text);
    let cut = repair_unclosed(&fixed);
    match (lines, cut) {
        (Some(l), Some(c)) if records(&c) > records(&l.json) => Ok((c, true, Vec::new())),
        (Some(l), _) => Ok((l.json, l.repaired || !l.skipped.is_empty(), l.skipped)),
        (None, Some(c)) => Ok((c, true, Vec::new())),
        (None, None) => Err(CacheError::Json {
            path: path.into(),
            source: first,
        }),
    }
}

/// Closes a cache that Kernel Tuner left open: tries the text as it is, then cut back to each
/// earlier brace, dropping a trailing comma and adding the missing `}` `}`. Two closing braces
/// complete the document only where the cut is between records (after a record's `}` or the
/// `{` opening the cache), so a partial record is never taken; a document without a `cache`
/// object does not count as repaired.
fn repair_unclosed(text: &str) -> Option<Json> {
    const TRIES: usize = 64;
    let mut head = text;
    for _ in 0..TRIES {
        let body = head.trim_end().trim_end_matches(',').trim_end();
        for tail in ["}}", "}"] {
            if let Ok(json) = serde_json::from_str::<Json>(&format!("{body}{tail}"))
                && json.get("cache").is_some_and(Json::is_object)
            {
                return Some(json);
            }
        }
        let (last, _) = head.char_indices().next_back()?;
        let cut = head[..last].rfind(['}', '{'])?;
        head = &text[..=cut];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_tokens_outside_strings_only() {
        let s = r#"{"a": NaN, "b": "NaN Infinity", "c": [-Infinity, Infinity], "d": "\"NaN"}"#;
        let fixed = replace_non_finite(s);
        assert_eq!(
            fixed,
            r#"{"a": null, "b": "NaN Infinity", "c": [null, null], "d": "\"NaN"}"#
        );
        assert!(matches!(replace_non_finite("{\"a\": 1}"), Cow::Borrowed(_)));
        // Found by fuzzing: a multi-byte character outside a string must not panic.
        assert_eq!(replace_non_finite("\u{1b132} NaN é"), "\u{1b132} null é");
    }
}
