//! # Salvaging a cache line by line
//!
//! Kernel Tuner and the runtime's journal write a cache one record per line: the header up to
//! `"cache": {`, then `"key": {...},` lines, then (once tuning ends) the closing braces. A file
//! that does not parse as a whole (a line of garbage from a disk error or a concurrent writer, a
//! record cut by a kill) is read here line by line: every line that parses as a record is kept,
//! every other one is listed as [`Skipped`] with its line number and why, so that one bad line
//! loses that line only, never the records after it. A last line that does not parse is a record
//! cut short (a kill while writing): dropped as Kernel Tuner drops it, and counted as a repair
//! rather than a skip.

use super::Skipped;
use super::non_finite::replace_non_finite;
use serde_json::{Map, Value as Json};

/// What a line-by-line reading kept.
pub(super) struct Salvaged {
    /// The header's object with `cache` holding every record that parsed.
    pub(super) json: Json,
    /// The lines that did not parse (the last one excepted).
    pub(super) skipped: Vec<Skipped>,
    /// Whether the file was unclosed or its last record cut short.
    pub(super) repaired: bool,
}

/// At most this many characters of a skipped line are kept to show it.
const SHOWN: usize = 120;

/// Reads `text` line by line (see the [module docs](self)); `None` if it is not in the
/// one-record-per-line form (no line ending in `"cache": {`, or a header that does not parse).
pub(super) fn by_lines(text: &str) -> Option<Salvaged> {
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    let mut header = String::new();
    for (_, line) in lines.by_ref() {
        header.push_str(line);
        let t = line.trim_end();
        if t.ends_with("\"cache\": {") || t.ends_with("\"cache\":{") {
            break;
        }
    }
    let mut json: Json = serde_json::from_str(&format!("{}}}}}", header.trim_end())).ok()?;
    json.get("cache")?.as_object()?;
    let mut records = Map::new();
    let mut skipped = Vec::new();
    // Closing braces seen since the last record: two close the cache and the top level.
    let mut braces = 0;
    while let Some((number, line)) = lines.next() {
        let last = lines.peek().is_none();
        let t = line.trim().trim_end_matches(',').trim_end();
        if t.is_empty() {
            continue;
        }
        if t.chars().all(|c| c == '}' || c.is_whitespace()) {
            braces += t.matches('}').count();
            continue;
        }
        let fixed = replace_non_finite(t);
        let parse = |r: &str| serde_json::from_str::<Map<String, Json>>(&format!("{{{r}}}"));
        // The last record may carry the closing braces on its line (`...}}}`).
        let (record, closing) = match parse(&fixed) {
            Ok(one) => (Ok(one), 0),
            Err(e) => (1..=2)
                .find_map(|n| {
                    let r = fixed.strip_suffix(&"}".repeat(n))?.trim_end();
                    let one = parse(r).ok().filter(|one| one.len() == 1)?;
                    Some((Ok(one), n))
                })
                .unwrap_or((Err(e), 0)),
        };
        match record {
            Ok(one) if one.len() == 1 => {
                let (key, value) = one.into_iter().next().expect("one member");
                if records.contains_key(&key) {
                    skipped.push(skip(number, t, "a key already read"));
                } else {
                    records.insert(key, value);
                }
                braces = closing;
            }
            Ok(_) => skipped.push(skip(number, t, "not one record")),
            Err(_) if last && !line.ends_with('\n') => {} // cut short by a kill
            Err(e) => skipped.push(skip(number, t, &e.to_string())),
        }
    }
    json["cache"] = Json::Object(records);
    Some(Salvaged {
        json,
        skipped,
        repaired: braces < 2,
    })
}

fn skip(number: usize, line: &str, why: &str) -> Skipped {
    let mut shown: String = line.chars().take(SHOWN).collect();
    if shown.len() < line.len() {
        shown.push_str("...");
    }
    Skipped {
        line: Some(number + 1),
        text: shown,
        reason: why.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "{\"kernel_name\": \"k\", \"tune_params_keys\": [\"a\"], \"tune_params\": {\"a\": [1, 2, 3, 4, 5, 6, 7, 8]},\n\"cache\": {";

    fn lines(n: usize) -> Vec<String> {
        (1..=n)
            .map(|a| format!("\"{a}\": {{\"a\": {a}, \"time\": {a}.5}}"))
            .collect()
    }

    #[test]
    fn a_garbage_line_loses_that_line_only() {
        let mut recs = lines(8);
        recs.insert(3, "\u{0}\u{0}garbage from a bad disk".to_owned());
        let text = format!("{HEAD}\n{}", recs.join(",\n"));
        let s = by_lines(&text).unwrap();
        assert_eq!(s.json["cache"].as_object().unwrap().len(), 8);
        assert_eq!(s.skipped.len(), 1);
        assert_eq!(s.skipped[0].line, Some(6));
        assert!(s.skipped[0].text.contains("garbage"));
        assert!(s.repaired);
    }

    #[test]
    fn a_cut_last_record_is_a_repair_and_closed_caches_are_not() {
        let text = format!("{HEAD}\n{},\n\"9\": {{\"a\": 9, \"ti", lines(3).join(",\n"));
        let s = by_lines(&text).unwrap();
        assert_eq!(s.json["cache"].as_object().unwrap().len(), 3);
        assert!(s.skipped.is_empty() && s.repaired);
        let closed = format!("{HEAD}\n{}\n}}\n}}\n", lines(3).join(",\n"));
        let s = by_lines(&closed).unwrap();
        assert_eq!(s.json["cache"].as_object().unwrap().len(), 3);
        assert!(s.skipped.is_empty() && !s.repaired);
        // A record after closing braces (a garbage line of braces, say) is kept.
        let trailing = format!("{closed}\"4\": {{\"a\": 4, \"time\": 1}}\n");
        let s = by_lines(&trailing).unwrap();
        assert_eq!(s.json["cache"].as_object().unwrap().len(), 4);
        assert!(s.skipped.is_empty() && s.repaired);
        assert!(by_lines("{\"cache\": {}}").is_none());
        assert!(by_lines("garbage\n\"cache\": {\n").is_none());
    }
}
