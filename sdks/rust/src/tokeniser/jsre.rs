//! ECMAScript regular expressions on PCRE2 (JIT; lookbehind and backreferences like ECMAScript's backtracking
//! engine), with ECMAScript's meaning.
//!
//! The engine's patterns are the TypeScript engine's sources. ECMAScript differs from Rust's regex syntax in
//! places that change what matches: `\d`, `\w` and `\b` are ASCII-only, `\s` is ECMAScript's whitespace set,
//! `.` stops at every line terminator, and `[` inside a class is a literal. `translate` rewrites those so one
//! pattern source finds the same spans in every engine (the Python engine's jsregex.py does the same).

use std::borrow::Cow;

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

pub fn translate(source: &str, multiline: bool) -> String {
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
        } else if c == '$' && !multiline {
            // PCRE2's $ also matches before a final newline; ECMAScript's only at the very end.
            out.push_str(r"\z");
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// A compiled pattern: PCRE2 with JIT, UTF and Unicode properties, offsets in bytes of the UTF-8 text.
pub struct Regex {
    re: pcre2::bytes::Regex,
}

#[derive(Debug, Clone, Copy)]
pub struct Match<'t> {
    text: &'t str,
    start: usize,
    end: usize,
}

impl<'t> Match<'t> {
    pub fn start(&self) -> usize {
        self.start
    }
    pub fn end(&self) -> usize {
        self.end
    }
    pub fn as_str(&self) -> &'t str {
        &self.text[self.start..self.end]
    }
}

pub struct Captures<'t> {
    text: &'t str,
    groups: Vec<Option<(usize, usize)>>,
}

impl<'t> Captures<'t> {
    pub fn get(&self, i: usize) -> Option<Match<'t>> {
        self.groups.get(i).copied().flatten().map(|(start, end)| Match { text: self.text, start, end })
    }
    pub fn len(&self) -> usize {
        self.groups.len()
    }
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// A match failed by a resource limit (PCRE2's match, depth or JIT stack limit). A detector reads it as no match,
/// so every failure is also counted on this thread (`limit_failures`): a request whose text could not be fully
/// scanned is refused by `tokenise_request_in` rather than sent with values nobody looked for.
#[derive(Debug)]
pub struct Error;

thread_local! {
    static LIMIT_FAILURES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn limit_failure() -> Error {
    LIMIT_FAILURES.with(|c| c.set(c.get() + 1));
    Error
}

/// Matches on this thread that failed by a resource limit since the thread started (compare two readings).
pub fn limit_failures() -> u64 {
    LIMIT_FAILURES.with(std::cell::Cell::get)
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Self, String> {
        pcre2::bytes::RegexBuilder::new()
            .utf(true)
            .ucp(true)
            .jit_if_available(true)
            .build(pattern)
            .map(|re| Regex { re })
            .map_err(|e| e.to_string())
    }

    fn captures_at<'t>(&self, text: &'t str, pos: usize) -> Result<Option<Captures<'t>>, Error> {
        let mut locs = self.re.capture_locations();
        match self.re.captures_read_at(&mut locs, text.as_bytes(), pos) {
            Err(_) => Err(limit_failure()),
            Ok(None) => Ok(None),
            Ok(Some(_)) => Ok(Some(Captures { text, groups: (0..locs.len()).map(|i| locs.get(i)).collect() })),
        }
    }

    pub fn captures<'t>(&self, text: &'t str) -> Result<Option<Captures<'t>>, Error> {
        self.captures_at(text, 0)
    }

    pub fn find_from_pos<'t>(&self, text: &'t str, pos: usize) -> Result<Option<Match<'t>>, Error> {
        match self.re.find_at(text.as_bytes(), pos) {
            Err(_) => Err(limit_failure()),
            Ok(m) => Ok(m.map(|m| Match { text, start: m.start(), end: m.end() })),
        }
    }

    pub fn find<'t>(&self, text: &'t str) -> Result<Option<Match<'t>>, Error> {
        self.find_from_pos(text, 0)
    }

    pub fn is_match(&self, text: &str) -> Result<bool, Error> {
        self.re.is_match(text.as_bytes()).map_err(|_| limit_failure())
    }

    /// Non-overlapping captures, left to right; after an empty match the search moves one character on.
    pub fn captures_iter<'r, 't>(&'r self, text: &'t str) -> impl Iterator<Item = Result<Captures<'t>, Error>> + 'r
    where
        't: 'r,
    {
        let mut pos = 0;
        let mut done = false;
        std::iter::from_fn(move || {
            if done || pos > text.len() {
                return None;
            }
            match self.captures_at(text, pos) {
                Err(e) => {
                    done = true;
                    Some(Err(e))
                }
                Ok(None) => {
                    done = true;
                    None
                }
                Ok(Some(c)) => {
                    let (s, e) = c.groups[0].unwrap_or((pos, pos));
                    pos = if e > s { e } else { e + text[e..].chars().next().map_or(1, char::len_utf8) };
                    Some(Ok(c))
                }
            }
        })
    }

    pub fn find_iter<'r, 't>(&'r self, text: &'t str) -> impl Iterator<Item = Result<Match<'t>, Error>> + 'r
    where
        't: 'r,
    {
        self.captures_iter(text).map(|c| c.map(|c| c.get(0).expect("group 0")))
    }

    /// Every match replaced by what `f` makes of it.
    pub fn replace_all<'t>(&self, text: &'t str, mut f: impl FnMut(&Captures<'t>) -> String) -> Cow<'t, str> {
        let mut out = String::new();
        let mut at = 0;
        let mut any = false;
        for c in self.captures_iter(text).flatten() {
            let m = c.get(0).expect("group 0");
            out.push_str(&text[at..m.start()]);
            out.push_str(&f(&c));
            at = m.end();
            any = true;
        }
        if !any {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// The first match replaced by `with` (literally).
    pub fn replace<'t>(&self, text: &'t str, with: &str) -> Cow<'t, str> {
        match self.find(text) {
            Ok(Some(m)) => Cow::Owned(format!("{}{}{}", &text[..m.start()], with, &text[m.end()..])),
            _ => Cow::Borrowed(text),
        }
    }
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
    let translated = format!("{prefix}{}", translate(source, flags.contains('m')));
    Regex::new(&translated).unwrap_or_else(|e| panic!("pattern {source:?} -> {translated:?}: {e}"))
}

/// A lazily compiled ECMAScript pattern: `re!("source", "flags")`.
#[macro_export]
macro_rules! re {
    ($src:expr) => {
        $crate::re!($src, "")
    };
    ($src:expr, $flags:expr) => {{
        static CELL: std::sync::OnceLock<$crate::tokeniser::jsre::Regex> = std::sync::OnceLock::new();
        CELL.get_or_init(|| $crate::tokeniser::jsre::compile($src, $flags))
    }};
}

/// `regex.test(s)` that treats a backtracking-limit error as no match.
pub fn test(re: &Regex, s: &str) -> bool {
    re.is_match(s).unwrap_or(false)
}
