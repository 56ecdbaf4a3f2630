//! A GML (Graph Modelling Language) reader producing a value tree with positions.
//!
//! The grammar accepted is the one written by networkx and the Internet Topology
//! Zoo: a list of `key value` pairs where a value is an integer, a real, a
//! double-quoted string or a bracketed list of further pairs.
//!
//! * keys: `[A-Za-z_][A-Za-z0-9_]*`
//! * integers: optional sign and decimal digits; integers too large for `i64`
//!   become [`GmlValue::Real`]
//! * reals: optional sign, digits with a decimal point and/or an exponent
//!   (`1.5E+10`, `-2.e-3`, `.5`, `1.`), and the bare tokens `INF`, `+INF`,
//!   `-INF`, `NAN`
//! * strings: double quoted, may span lines; HTML/ISO entities (`&#34;`,
//!   `&#x4E2D;`, `&amp;`, ...) and the backslash escapes `\"`, `\\`, `\n`, `\t`
//!   are decoded; an unknown entity or a bare `&` is kept literally
//! * `#` starts a comment running to the end of the line
//!
//! Positions are 1-based; columns count characters (not bytes).

use serde::Serialize;

/// A 1-based position in the source text; `col` counts characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pos {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column number in characters, starting at 1.
    pub col: u32,
}

impl Pos {
    /// The first character of a file.
    pub const START: Pos = Pos { line: 1, col: 1 };
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A GML value.
#[derive(Debug, Clone, PartialEq)]
pub enum GmlValue {
    /// An integer that fits in `i64`.
    Int(i64),
    /// A real number (also used for integers too large for `i64`).
    Real(f64),
    /// A decoded string.
    Str(String),
    /// A bracketed list of key/value pairs.
    List(Vec<GmlEntry>),
}

impl GmlValue {
    /// A short description of the value's kind for error messages
    /// ("an integer", "a real", "a string", "a list").
    pub fn kind(&self) -> &'static str {
        match self {
            GmlValue::Int(_) => "an integer",
            GmlValue::Real(_) => "a real",
            GmlValue::Str(_) => "a string",
            GmlValue::List(_) => "a list",
        }
    }

    /// The value as `f64` if it is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            GmlValue::Int(i) => Some(*i as f64),
            GmlValue::Real(r) => Some(*r),
            _ => None,
        }
    }
}

/// One `key value` pair with the positions of the key and of the value's first character.
#[derive(Debug, Clone, PartialEq)]
pub struct GmlEntry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: GmlValue,
    /// Where the key starts.
    pub key_pos: Pos,
    /// Where the value starts (for a list, its `[`).
    pub value_pos: Pos,
}

/// A syntax error with its position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {}, column {}: {message}", pos.line, pos.col)]
pub struct GmlError {
    /// Where the problem was found.
    pub pos: Pos,
    /// What was expected and what was found.
    pub message: String,
}

/// Lists nested deeper than this are refused (keeps recursion bounded).
pub const MAX_DEPTH: usize = 256;

/// Parses GML source text into its top-level list of key/value pairs.
pub fn parse(src: &str) -> Result<Vec<GmlEntry>, GmlError> {
    Parser::new(src).parse_top()
}

/// Decodes file bytes: UTF-8 if valid (a leading byte-order mark is removed),
/// else Latin-1 (ISO 8859-1). Never fails.
pub fn decode_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.strip_prefix('\u{feff}').unwrap_or(s).to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// A lexical token.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Real(f64),
    Str(String),
    Open,
    Close,
    Eof,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("identifier `{s}`"),
            Tok::Int(i) => format!("integer {i}"),
            Tok::Real(r) => format!("real {r}"),
            Tok::Str(s) => format!("string \"{}\"", abbreviate(s)),
            Tok::Open => "`[`".to_string(),
            Tok::Close => "`]`".to_string(),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

fn abbreviate(s: &str) -> String {
    const MAX: usize = 30;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}...")
    }
}

fn describe_char(c: char) -> String {
    if c.is_control() || c.is_whitespace() {
        format!("character {:?}", c)
    } else {
        format!("character '{c}'")
    }
}

fn err(pos: Pos, message: impl Into<String>) -> GmlError {
    GmlError {
        pos,
        message: message.into(),
    }
}

/// Character cursor with line/column tracking.
struct Lexer {
    chars: Vec<char>,
    idx: usize,
    line: u32,
    col: u32,
}

impl Lexer {
    fn new(src: &str) -> Lexer {
        let src = src.strip_prefix('\u{feff}').unwrap_or(src);
        Lexer {
            chars: src.chars().collect(),
            idx: 0,
            line: 1,
            col: 1,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.idx).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.idx.saturating_add(ahead)).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.idx += 1;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
        } else {
            self.col = self.col.saturating_add(1);
        }
        Some(c)
    }

    fn skip_trivia(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else if c == '#' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    /// Next token and the position of its first character.
    fn next(&mut self) -> Result<(Tok, Pos), GmlError> {
        self.skip_trivia();
        let pos = self.pos();
        let Some(c) = self.peek() else {
            return Ok((Tok::Eof, pos));
        };
        let tok = match c {
            '[' => {
                self.bump();
                Tok::Open
            }
            ']' => {
                self.bump();
                Tok::Close
            }
            '"' => self.string(pos)?,
            c if c.is_ascii_alphabetic() || c == '_' => Tok::Ident(self.ident()),
            c if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => self.number(pos)?,
            c => {
                return Err(err(
                    pos,
                    format!(
                        "expected a key, a value, `[` or `]`, found {}",
                        describe_char(c)
                    ),
                ))
            }
        };
        self.expect_delimiter(&tok)?;
        Ok((tok, pos))
    }

    /// After a key or number the next character must end the token.
    fn expect_delimiter(&self, tok: &Tok) -> Result<(), GmlError> {
        if !matches!(tok, Tok::Ident(_) | Tok::Int(_) | Tok::Real(_)) {
            return Ok(());
        }
        match self.peek() {
            None => Ok(()),
            Some(c) if c.is_whitespace() || matches!(c, '[' | ']' | '"' | '#') => Ok(()),
            Some(c) => Err(err(
                self.pos(),
                format!(
                    "expected whitespace after {}, found {}",
                    tok.describe(),
                    describe_char(c)
                ),
            )),
        }
    }

    fn ident(&mut self) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        s
    }

    fn take_digits(&mut self, out: &mut String) -> usize {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if !c.is_ascii_digit() {
                break;
            }
            out.push(c);
            self.bump();
            n += 1;
        }
        n
    }

    fn number(&mut self, start: Pos) -> Result<Tok, GmlError> {
        let mut text = String::new();
        if let Some(sign @ ('+' | '-')) = self.peek() {
            text.push(sign);
            self.bump();
        }
        if let Some(special) = self.special_real() {
            let negative = text.starts_with('-');
            return Ok(Tok::Real(if negative { -special } else { special }));
        }
        let int_digits = self.take_digits(&mut text);
        let mut is_real = false;
        let mut frac_digits = 0;
        if self.peek() == Some('.') {
            is_real = true;
            text.push('.');
            self.bump();
            frac_digits = self.take_digits(&mut text);
        }
        if int_digits + frac_digits == 0 {
            let found = self
                .peek()
                .map_or("end of input".to_string(), describe_char);
            return Err(err(
                start,
                format!("expected digits in number `{text}`, found {found}"),
            ));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            is_real = true;
            self.exponent(&mut text)?;
        }
        Ok(finish_number(&text, is_real))
    }

    /// `INF` or `NAN` right at the cursor (after an optional sign), as a bare token.
    fn special_real(&mut self) -> Option<f64> {
        for (word, value) in [("INF", f64::INFINITY), ("NAN", f64::NAN)] {
            let matches_word = word
                .chars()
                .enumerate()
                .all(|(i, w)| self.peek_at(i) == Some(w));
            let next = self.peek_at(word.len());
            let ends = next.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
            if matches_word && ends {
                for _ in 0..word.len() {
                    self.bump();
                }
                return Some(value);
            }
        }
        None
    }

    fn exponent(&mut self, text: &mut String) -> Result<(), GmlError> {
        text.push('e');
        self.bump();
        if let Some(sign @ ('+' | '-')) = self.peek() {
            text.push(sign);
            self.bump();
        }
        if self.take_digits(text) == 0 {
            let found = self
                .peek()
                .map_or("end of input".to_string(), describe_char);
            return Err(err(
                self.pos(),
                format!("expected exponent digits in number `{text}`, found {found}"),
            ));
        }
        Ok(())
    }

    fn string(&mut self, start: Pos) -> Result<Tok, GmlError> {
        self.bump(); // opening quote
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(err(
                    start,
                    "expected a closing `\"` for the string starting here, found end of input",
                ));
            };
            match c {
                '"' => return Ok(Tok::Str(out)),
                '\\' => self.escape(&mut out),
                '&' => self.entity(&mut out),
                '\r' if self.peek() == Some('\n') => {}
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut String) {
        let decoded = match self.peek() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('n') => '\n',
            Some('t') => '\t',
            _ => {
                out.push('\\');
                return;
            }
        };
        self.bump();
        out.push(decoded);
    }

    /// Called after a `&`: decodes an entity if one follows, else keeps the `&`.
    fn entity(&mut self, out: &mut String) {
        const MAX_ENTITY: usize = 12;
        let mut body = String::new();
        let mut i = 0;
        loop {
            match self.peek_at(i) {
                Some(';') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '#' => body.push(c),
                _ => {
                    out.push('&');
                    return;
                }
            }
            i += 1;
            if i > MAX_ENTITY {
                out.push('&');
                return;
            }
        }
        match decode_entity(&body) {
            Some(c) => {
                for _ in 0..=i {
                    self.bump();
                }
                out.push(c);
            }
            None => out.push('&'),
        }
    }
}

/// The character named by an entity body (between `&` and `;`), if known.
fn decode_entity(body: &str) -> Option<char> {
    if let Some(num) = body.strip_prefix('#') {
        let code = if let Some(hex) = num.strip_prefix(['x', 'X']) {
            u32::from_str_radix(hex, 16).ok()?
        } else {
            num.parse::<u32>().ok()?
        };
        return char::from_u32(code).filter(|&c| c != '\0');
    }
    match body {
        "amp" => Some('&'),
        "quot" => Some('"'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "apos" => Some('\''),
        "nbsp" => Some('\u{a0}'),
        _ => None,
    }
}

fn finish_number(text: &str, is_real: bool) -> Tok {
    if !is_real {
        if let Ok(i) = text.parse::<i64>() {
            return Tok::Int(i);
        }
    }
    // Digits-only text (with optional sign, point, exponent) always parses as f64.
    Tok::Real(text.parse::<f64>().unwrap_or(f64::NAN))
}

/// An open list while parsing.
struct Frame {
    key: String,
    key_pos: Pos,
    open_pos: Pos,
    entries: Vec<GmlEntry>,
}

/// What follows a key: a complete scalar entry or the start of a list.
enum AfterKey {
    Scalar(GmlEntry),
    ListStart(Frame),
}

struct Parser {
    lex: Lexer,
}

impl Parser {
    fn new(src: &str) -> Parser {
        Parser {
            lex: Lexer::new(src),
        }
    }

    /// Iterative parse: `stack` holds the lists that are still open.
    fn parse_top(mut self) -> Result<Vec<GmlEntry>, GmlError> {
        let mut top: Vec<GmlEntry> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let (tok, pos) = self.lex.next()?;
            let entry = match tok {
                Tok::Ident(key) => match self.value_after_key(key, pos, stack.len())? {
                    AfterKey::Scalar(entry) => entry,
                    AfterKey::ListStart(frame) => {
                        stack.push(frame);
                        continue;
                    }
                },
                Tok::Close => close_list(stack.pop(), pos)?,
                Tok::Eof => return end_of_input(top, stack.last()),
                other => return Err(unexpected_in_list(&other, pos, stack.is_empty())),
            };
            match stack.last_mut() {
                Some(frame) => frame.entries.push(entry),
                None => top.push(entry),
            }
        }
    }

    fn value_after_key(
        &mut self,
        key: String,
        key_pos: Pos,
        depth: usize,
    ) -> Result<AfterKey, GmlError> {
        let (tok, value_pos) = self.lex.next()?;
        let value = match tok {
            Tok::Int(i) => GmlValue::Int(i),
            Tok::Real(r) => GmlValue::Real(r),
            Tok::Str(s) => GmlValue::Str(s),
            Tok::Ident(word) if word == "INF" => GmlValue::Real(f64::INFINITY),
            Tok::Ident(word) if word == "NAN" => GmlValue::Real(f64::NAN),
            Tok::Open if depth >= MAX_DEPTH => {
                return Err(err(
                    value_pos,
                    format!("expected at most {MAX_DEPTH} nested lists, found deeper nesting"),
                ))
            }
            Tok::Open => {
                return Ok(AfterKey::ListStart(Frame {
                    key,
                    key_pos,
                    open_pos: value_pos,
                    entries: Vec::new(),
                }))
            }
            Tok::Eof => {
                return Err(err(
                    key_pos,
                    format!("expected a value for key `{key}`, found end of input"),
                ))
            }
            other => {
                return Err(err(
                    value_pos,
                    format!(
                        "expected a value for key `{key}`, found {}",
                        other.describe()
                    ),
                ))
            }
        };
        Ok(AfterKey::Scalar(GmlEntry {
            key,
            value,
            key_pos,
            value_pos,
        }))
    }
}

fn close_list(frame: Option<Frame>, pos: Pos) -> Result<GmlEntry, GmlError> {
    let Some(frame) = frame else {
        return Err(err(
            pos,
            "expected a key or end of input, found `]` with no matching `[`",
        ));
    };
    Ok(GmlEntry {
        key: frame.key,
        value: GmlValue::List(frame.entries),
        key_pos: frame.key_pos,
        value_pos: frame.open_pos,
    })
}

fn end_of_input(top: Vec<GmlEntry>, open: Option<&Frame>) -> Result<Vec<GmlEntry>, GmlError> {
    match open {
        None => Ok(top),
        Some(frame) => Err(err(
            frame.open_pos,
            format!(
                "expected `]` to close the list of `{}` opened here, found end of input",
                frame.key
            ),
        )),
    }
}

fn unexpected_in_list(tok: &Tok, pos: Pos, at_top: bool) -> GmlError {
    let wanted = if at_top {
        "a key or end of input"
    } else {
        "a key or `]`"
    };
    err(pos, format!("expected {wanted}, found {}", tok.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value_of(src: &str) -> GmlValue {
        let entries = parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(entries.len(), 1, "{src:?}");
        entries
            .into_iter()
            .next()
            .map(|e| e.value)
            .unwrap_or(GmlValue::Int(0))
    }

    fn error_of(src: &str) -> GmlError {
        match parse(src) {
            Err(e) => e,
            Ok(v) => panic!("{src:?} parsed as {v:?}"),
        }
    }

    fn p(line: u32, col: u32) -> Pos {
        Pos { line, col }
    }

    #[test]
    fn integers_with_signs() {
        assert_eq!(value_of("x 42"), GmlValue::Int(42));
        assert_eq!(value_of("x -3"), GmlValue::Int(-3));
        assert_eq!(value_of("x +3"), GmlValue::Int(3));
        assert_eq!(value_of("x -9223372036854775808"), GmlValue::Int(i64::MIN));
    }

    #[test]
    fn huge_integers_become_reals() {
        assert_eq!(value_of("x 99999999999999999999"), GmlValue::Real(1e20));
        assert_eq!(value_of("x -99999999999999999999"), GmlValue::Real(-1e20));
    }

    #[test]
    fn reals_in_all_forms() {
        assert_eq!(value_of("x 1.5E+10"), GmlValue::Real(1.5e10));
        assert_eq!(value_of("x -2.e-3"), GmlValue::Real(-2e-3));
        assert_eq!(value_of("x .5"), GmlValue::Real(0.5));
        assert_eq!(value_of("x 1."), GmlValue::Real(1.0));
        assert_eq!(value_of("x +0.25"), GmlValue::Real(0.25));
        assert_eq!(value_of("x 3e2"), GmlValue::Real(300.0));
    }

    #[test]
    fn infinities_and_nan() {
        assert_eq!(value_of("x INF"), GmlValue::Real(f64::INFINITY));
        assert_eq!(value_of("x +INF"), GmlValue::Real(f64::INFINITY));
        assert_eq!(value_of("x -INF"), GmlValue::Real(f64::NEG_INFINITY));
        assert!(matches!(value_of("x NAN"), GmlValue::Real(r) if r.is_nan()));
        // INF is still a valid key.
        assert_eq!(parse("INF 1").map(|v| v.len()), Ok(1));
    }

    #[test]
    fn nested_lists_with_positions() {
        let src = "graph [\n  node [ id 1 label \"a\" ]\n]\n";
        let top = parse(src).unwrap_or_default();
        let graph = &top[0];
        assert_eq!(
            (graph.key.as_str(), graph.key_pos, graph.value_pos),
            ("graph", p(1, 1), p(1, 7))
        );
        let GmlValue::List(items) = &graph.value else {
            panic!("not a list")
        };
        let GmlValue::List(node) = &items[0].value else {
            panic!("not a list")
        };
        assert_eq!(items[0].key_pos, p(2, 3));
        assert_eq!(
            node[0],
            GmlEntry {
                key: "id".into(),
                value: GmlValue::Int(1),
                key_pos: p(2, 10),
                value_pos: p(2, 13)
            }
        );
        assert_eq!(node[1].value, GmlValue::Str("a".into()));
        assert_eq!(node[1].value_pos, p(2, 21));
    }

    #[test]
    fn strings_span_lines_and_decode_escapes() {
        assert_eq!(value_of("x \"a\r\nb\""), GmlValue::Str("a\nb".into()));
        assert_eq!(
            value_of(r#"x "q\"\\\n\t\z""#),
            GmlValue::Str("q\"\\\n\t\\z".into())
        );
    }

    #[test]
    fn entities_are_decoded_or_kept() {
        let cases = [
            ("&#34;", "\""),
            ("San Jos&#233;", "San José"),
            ("&#x4E2D;&#X56FD;", "中国"),
            ("&amp;&quot;&lt;&gt;&apos;", "&\"<>'"),
            (
                "&foo; & &#; &#xZZ; &#1114112; &",
                "&foo; & &#; &#xZZ; &#1114112; &",
            ),
            ("a&#38;b", "a&b"),
        ];
        for (raw, want) in cases {
            assert_eq!(
                value_of(&format!("x \"{raw}\"")),
                GmlValue::Str(want.into()),
                "{raw}"
            );
        }
    }

    #[test]
    fn comments_whitespace_and_unicode() {
        let src = "# header\r\ngraph\t[ # inline\r\n  label \"Zürich 東京\" # c\r\n]\r\n";
        let top = parse(src).unwrap_or_default();
        let GmlValue::List(items) = &top[0].value else {
            panic!("not a list")
        };
        assert_eq!(items[0].value, GmlValue::Str("Zürich 東京".into()));
        // Columns count characters, not bytes.
        assert_eq!(parse("a \"é\" b 1").map(|v| v[1].key_pos), Ok(p(1, 7)));
    }

    #[test]
    fn decode_bytes_falls_back_to_latin1() {
        assert_eq!(decode_bytes("Zürich".as_bytes()), "Zürich");
        assert_eq!(decode_bytes(b"Z\xfcrich"), "Zürich");
        assert_eq!(decode_bytes(b"\xef\xbb\xbfx 1"), "x 1");
    }

    #[test]
    fn unterminated_string_points_at_opening_quote() {
        let e = error_of("graph [\n  label \"abc\n  ]\n");
        assert_eq!(e.pos, p(2, 9));
        assert!(
            e.message.contains("expected a closing `\"`") && e.message.contains("end of input")
        );
        assert_eq!(e.to_string(), format!("line 2, column 9: {}", e.message));
    }

    #[test]
    fn unmatched_close_bracket() {
        let e = error_of("a 1\n]\n");
        assert_eq!(e.pos, p(2, 1));
        assert!(
            e.message.contains("found `]` with no matching `[`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn missing_close_bracket_points_at_open() {
        let e = error_of("graph [\n node [\n  id 1\n");
        assert_eq!(e.pos, p(2, 7));
        assert!(
            e.message
                .contains("expected `]` to close the list of `node`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn key_without_value() {
        let e = error_of("graph [ id ]");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (p(1, 12), "expected a value for key `id`, found `]`")
        );
        let e = error_of("x 1\nlabel");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (
                p(2, 1),
                "expected a value for key `label`, found end of input"
            )
        );
        let e = error_of("a b");
        assert_eq!(
            e.message,
            "expected a value for key `a`, found identifier `b`"
        );
    }

    #[test]
    fn value_where_key_expected() {
        let e = error_of("graph [ 3 ]");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (p(1, 9), "expected a key or `]`, found integer 3")
        );
        let e = error_of("\"s\"");
        assert_eq!(
            e.message,
            "expected a key or end of input, found string \"s\""
        );
    }

    #[test]
    fn malformed_numbers_and_characters() {
        let e = error_of("x 12abc");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (
                p(1, 5),
                "expected whitespace after integer 12, found character 'a'"
            )
        );
        let e = error_of("x 1e+");
        assert_eq!(e.pos, p(1, 6));
        assert!(
            e.message.starts_with("expected exponent digits"),
            "{}",
            e.message
        );
        let e = error_of("x -");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (p(1, 3), "expected digits in number `-`, found end of input")
        );
        let e = error_of("x @");
        assert_eq!(
            (e.pos, e.message.as_str()),
            (
                p(1, 3),
                "expected a key, a value, `[` or `]`, found character '@'"
            )
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let src = "a [ ".repeat(MAX_DEPTH + 5);
        let e = error_of(&src);
        assert!(e.message.contains("nested lists"), "{}", e.message);
        let ok = format!("{}{}", "a [ ".repeat(MAX_DEPTH), "] ".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let text = decode_bytes(&bytes);
            let _ = parse(&text);
        }

        #[test]
        fn gml_like_text_never_panics(text in "[a-z \\[\\]\"&#;0-9.eE+\\-\\\\\n\r\t]{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn integers_round_trip(i in any::<i64>()) {
            prop_assert_eq!(value_of(&format!("k {i}")), GmlValue::Int(i));
        }
    }
}
