//! # Did-you-mean suggestions
//!
//! The closest known name to a misspelled one, for error messages: an unknown parameter in a
//! constraint, an unknown option of `#[tunable]`. Case is ignored; a candidate further than a
//! third of the name's length (at least 2 edits) is no suggestion.
//!
//! ```
//! use tunable_search::suggest::closest;
//!
//! let options = ["budget", "strategy", "verify"];
//! assert_eq!(closest("budjet", options), Some("budget"));
//! assert_eq!(closest("Verify", options), Some("verify"));
//! assert_eq!(closest("tile", options), None);
//! ```

/// The candidate closest to `name` by edit distance, if it is close enough; the first of equally
/// close ones.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for cand in candidates {
        let d = levenshtein(&lower, &cand.to_lowercase());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    let limit = (name.chars().count() / 3).max(2);
    best.filter(|(d, _)| *d <= limit).map(|(_, c)| c)
}

/// Edit distance between two strings, in characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("tyle", "tile"), 1);
        assert_eq!(levenshtein("same", "same"), 0);
    }

    #[test]
    fn closest_respects_the_limit_and_prefers_the_first_tie() {
        assert_eq!(closest("verfy", ["verify", "key"]), Some("verify"));
        // "warmup" is 2 edits from "warump": within the minimum limit of 2.
        assert_eq!(closest("warump", ["warmup"]), Some("warmup"));
        assert_eq!(closest("xyzzy", ["verify"]), None);
        assert_eq!(closest("ab", ["ax", "ay"]), Some("ax"));
        assert_eq!(closest("x", std::iter::empty()), None);
    }
}
