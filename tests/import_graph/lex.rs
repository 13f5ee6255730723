//! # Tokens of a Rust file, as far as imports need them
//!
//! Comments (doc comments too) and the insides of literals are dropped, so a path written in
//! prose or in a string is not an import. What remains: identifiers (`r#` stripped), `::`, single
//! punctuation characters, and literals (a string keeps its text, for `#[path = "…"]`).

/// One token and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: Kind,
    pub line: usize,
}

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An identifier or keyword.
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other punctuation character.
    Punct(char),
    /// A string literal's text (escapes left as written).
    Str(String),
    /// A number, character or byte literal.
    Other,
}

impl Token {
    /// The identifier's text, if it is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            Kind::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// Whether it is the identifier `word`.
    pub fn is(&self, word: &str) -> bool {
        self.ident() == Some(word)
    }

    /// Whether it is the punctuation character `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }
}

fn ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Splits `source` into tokens.
pub fn tokens(source: &str) -> Vec<Token> {
    let s: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    while i < s.len() {
        let c = s[i];
        let start_line = line;
        let push = |out: &mut Vec<Token>, kind| {
            out.push(Token {
                kind,
                line: start_line,
            })
        };
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if s[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&s, i) {
            let text: String = s[i..end].iter().collect();
            line += text.matches('\n').count();
            let open = text.find('"').unwrap_or(0) + 1;
            let close = text.rfind('"').unwrap_or(text.len());
            push(&mut out, Kind::Str(text[open..close.max(open)].to_string()));
            i = end;
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            i += if c == '"' { 1 } else { 2 };
            let mut text = String::new();
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    text.push(s[i]);
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                if i < s.len() {
                    text.push(s[i]);
                }
                i += 1;
            }
            i += 1;
            push(&mut out, Kind::Str(text));
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            // A character literal ('x', '\n', b'x') or a lifetime / label ('a).
            let q = if c == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                i = q + 2;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
                push(&mut out, Kind::Other);
            } else if at(q + 2) == '\'' {
                i = q + 3;
                push(&mut out, Kind::Other);
            } else {
                // A lifetime: skip the quote; its name is an identifier of no interest.
                i = q + 1;
                while i < s.len() && ident_continue(s[i]) {
                    i += 1;
                }
                push(&mut out, Kind::Other);
            }
        } else if c == 'r' && at(i + 1) == '#' && ident_start(at(i + 2)) {
            i += 2;
            let begin = i;
            while i < s.len() && ident_continue(s[i]) {
                i += 1;
            }
            push(&mut out, Kind::Ident(s[begin..i].iter().collect()));
        } else if ident_start(c) {
            let begin = i;
            while i < s.len() && ident_continue(s[i]) {
                i += 1;
            }
            push(&mut out, Kind::Ident(s[begin..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < s.len()
                && (ident_continue(s[i]) || (s[i] == '.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
            push(&mut out, Kind::Other);
        } else if c == ':' && at(i + 1) == ':' {
            i += 2;
            push(&mut out, Kind::PathSep);
        } else {
            i += 1;
            push(&mut out, Kind::Punct(c));
        }
    }
    out
}

/// Where a raw string literal starting at `i` (`r"…"`, `r#"…"#`, `br#"…"#`, `cr"…"`) ends.
fn raw_string_end(s: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(s.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while s.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if s.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < s.len() {
        if s[j] == '"' && (1..=hashes).all(|k| s.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(source: &str) -> Vec<String> {
        tokens(source)
            .into_iter()
            .filter_map(|t| t.ident().map(str::to_string))
            .collect()
    }

    #[test]
    fn comments_strings_and_chars_hide_their_insides() {
        let source =
            "a // crate::b\n/* x /* nested */ y */ \"crate::c\" r#\"q\"# 'd' '\\'' b'e' 'f: g";
        assert_eq!(idents(source), ["a", "g"]);
    }

    #[test]
    fn path_separators_and_lines() {
        let t = tokens("use crate::a;\nfoo");
        assert_eq!(t[1].kind, Kind::Ident("crate".into()));
        assert_eq!(t[2].kind, Kind::PathSep);
        assert_eq!(t.last().unwrap().line, 2);
    }
}
