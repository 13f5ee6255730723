//! # Untrusted text, as the tables show it
//!
//! Names and devices in tuned files come from the files; before a table prints them, control and
//! bidirectional-override characters are escaped, so that a file cannot rewrite the terminal
//! (`show`, its chains and its artifacts all print through [`shown`]).

/// `text` as shown in a table: control characters and bidirectional overrides escaped.
pub(crate) fn shown(text: &str) -> String {
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}');
    text.chars()
        .flat_map(|c| {
            let escape = c.is_control() || bidi(c);
            let escaped: Vec<char> = match escape {
                true => c.escape_unicode().collect(),
                false => vec![c],
            };
            escaped
        })
        .collect()
}
