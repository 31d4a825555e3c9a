//! ECMAScript regular expressions on fancy-regex, with ECMAScript's meaning.
//!
//! The engine's patterns are the TypeScript engine's sources. ECMAScript differs from Rust's regex syntax in
//! places that change what matches: `\d`, `\w` and `\b` are ASCII-only, `\s` is ECMAScript's whitespace set,
//! `.` stops at every line terminator, and `[` inside a class is a literal. `translate` rewrites those so one
//! pattern source finds the same spans in every engine (the Python engine's jsregex.py does the same).

use fancy_regex::Regex;

const WS: &str = r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const WORD: &str = "A-Za-z0-9_";

/// True when the pattern at `i` must match an ASCII word character first (a literal letter, digit or `_` that
/// is not optional, or a group whose every alternative starts so): `\b` there only needs a non-word behind.
fn starts_with_word_char(src: &[char], i: usize) -> bool {
    if i >= src.len() {
        return false;
    }
    let c = src[i];
    if c.is_ascii_alphanumeric() || c == '_' {
        let f1 = src.get(i + 1).copied();
        let f2 = src.get(i + 2).copied();
        return !(f1 == Some('?') || f1 == Some('*') || (f1 == Some('{') && f2 == Some('0')));
    }
    if c == '(' && src.get(i + 1) == Some(&'?') && src.get(i + 2) == Some(&':') {
        let mut depth = 0;
        let mut j = i;
        let mut starts = vec![i + 3];
        while j < src.len() {
            let ch = src[j];
            if ch == '\\' {
                j += 2;
                continue;
            }
            if ch == '[' {
                j += 1;
                while j < src.len() && src[j] != ']' {
                    if src[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                j += 1;
                continue;
            }
            if ch == '(' {
                depth += 1;
            } else if ch == ')' {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            } else if ch == '|' && depth == 1 {
                starts.push(j + 1);
            }
            j += 1;
        }
        if j >= src.len() || matches!(src.get(j + 1), Some('?') | Some('*')) {
            return false;
        }
        return starts.iter().all(|k| starts_with_word_char(src, *k));
    }
    false
}

/// True when the pattern just before `i` must end with an ASCII word character (a literal or `\d`, `\w`).
fn ends_with_word_char(out: &str) -> bool {
    out.ends_with("[0-9]") || out.ends_with(&format!("[{WORD}]")) || {
        let mut it = out.chars().rev();
        match (it.next(), it.next()) {
            (Some(c), prev) => (c.is_ascii_alphanumeric() || c == '_') && prev != Some('\\'),
            _ => false,
        }
    }
}

pub fn translate(source: &str) -> String {
    let src: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 16);
    let mut i = 0;
    let mut in_class = false;
    while i < src.len() {
        let c = src[i];
        if c == '\\' && i + 1 < src.len() {
            let n = src[i + 1];
            if (n == 'p' || n == 'P') && src.get(i + 2) == Some(&'{') {
                let close = (i..src.len()).find(|k| src[*k] == '}').expect("closing brace");
                out.extend(&src[i..=close]);
                i = close + 1;
                continue;
            }
            if n == 'u' && i + 6 <= src.len() {
                let hex: String = src[i + 2..i + 6].iter().collect();
                out.push_str(&format!("\\x{{{hex}}}"));
                i += 6;
                continue;
            }
            if in_class {
                match n {
                    'd' => out.push_str("0-9"),
                    'w' => out.push_str(WORD),
                    's' => out.push_str(WS),
                    'b' => out.push_str("\\x08"),
                    '/' => out.push('/'),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            } else {
                match n {
                    'd' => out.push_str("[0-9]"),
                    'D' => out.push_str("[^0-9]"),
                    'w' => out.push_str(&format!("[{WORD}]")),
                    'W' => out.push_str(&format!("[^{WORD}]")),
                    's' => out.push_str(&format!("[{WS}]")),
                    'S' => out.push_str(&format!("[^{WS}]")),
                    'b' => {
                        if starts_with_word_char(&src, i + 2) {
                            out.push_str(&format!("(?<![{WORD}])"));
                        } else if ends_with_word_char(&out) {
                            out.push_str(&format!("(?![{WORD}])"));
                        } else {
                            out.push_str(&format!("(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"));
                        }
                    }
                    'B' => out.push_str(&format!("(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))")),
                    '/' => out.push('/'),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            i += 2;
            continue;
        }
        if in_class {
            match c {
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '[' => out.push_str("\\["),
                '&' => out.push_str("\\&"),
                '~' => out.push_str("\\~"),
                _ => out.push(c),
            }
        } else if c == '[' {
            in_class = true;
            out.push('[');
            if src.get(i + 1) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            // A leading "]" or "-" is literal in both; nothing else to do.
        } else if c == '.' {
            out.push_str(r"[^\n\r\x{2028}\x{2029}]");
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Compiles an ECMAScript pattern source with its flags (`g`, `u`, `y` need no translation here).
pub fn compile(source: &str, flags: &str) -> Regex {
    let mut prefix = String::new();
    if flags.contains('i') || flags.contains('m') {
        prefix.push_str("(?");
        if flags.contains('i') {
            prefix.push('i');
        }
        if flags.contains('m') {
            prefix.push('m');
        }
        prefix.push(')');
    }
    let translated = format!("{prefix}{}", translate(source));
    Regex::new(&translated).unwrap_or_else(|e| panic!("pattern {source:?} -> {translated:?}: {e}"))
}

/// A lazily compiled ECMAScript pattern: `re!("source", "flags")`.
#[macro_export]
macro_rules! re {
    ($src:expr) => {
        $crate::re!($src, "")
    };
    ($src:expr, $flags:expr) => {{
        static CELL: std::sync::OnceLock<fancy_regex::Regex> = std::sync::OnceLock::new();
        CELL.get_or_init(|| $crate::tokeniser::jsre::compile($src, $flags))
    }};
}

/// `regex.test(s)` that treats a backtracking-limit error as no match.
pub fn test(re: &Regex, s: &str) -> bool {
    re.is_match(s).unwrap_or(false)
}
