//! A minimal JSON reader (RFC 8259), `std` only: enough to read the
//! library's memory snapshots ([`crate::memory_snapshot`]) and whatever a
//! caller wants from them that [`crate::SnapshotSummary`] does not cover.
//!
//! It reads the whole grammar: `null`, `true`, `false`, numbers (integers
//! that fit an `i64` stay exact as [`Value::Int`]; every other number is a
//! [`Value::Float`]), strings with every escape (`\uXXXX` included, surrogate
//! pairs joined; a lone surrogate is refused), arrays and objects nested up
//! to [`MAX_DEPTH`] levels. Anything else is a [`ParseError`] with the byte
//! offset; it never panics.
//!
//! ```
//! use stridemem::json::{self, Value};
//!
//! let v = json::parse(r#"{"tag": "enc\u00e9", "sizes": [512, 1.5e3], "free": null}"#).unwrap();
//! assert_eq!(v.get("tag").and_then(Value::as_str), Some("encé"));
//! assert_eq!(v.get("sizes").and_then(Value::as_array).map(|a| a.len()), Some(2));
//! assert_eq!(v.get("sizes").unwrap().as_array().unwrap()[1].as_f64(), Some(1500.0));
//! assert!(v.get("free").unwrap().is_null());
//! assert!(json::parse("[1, 2,]").is_err());
//! ```

use std::fmt;

/// How deep arrays and objects may nest; deeper input is a [`ParseError`]
/// (the reader is recursive: the limit keeps it off the end of the stack).
pub const MAX_DEPTH: usize = 256;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number written without a fraction or an exponent that fits an
    /// `i64`, exactly.
    Int(i64),
    /// Any other number: with a fraction or an exponent, or an integer
    /// beyond the `i64` range (which may lose precision). Always finite.
    Float(f64),
    /// A string, escapes decoded.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object's members in document order. Duplicate names are kept;
    /// [`Value::get`] finds the last, as JavaScript and Python do.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object (the last one when the name repeats);
    /// `None` for a missing member or a value that is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The boolean of `true` / `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An integer ([`Value::Int`]); `None` for any other value, a
    /// [`Value::Float`] included.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A non-negative integer ([`Value::Int`] at least 0).
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i64().and_then(|i| u64::try_from(i).ok())
    }

    /// Any number as an `f64` (an [`Value::Int`] beyond 2^53 rounds).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members of an object, in document order.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
}

/// Why a text is not JSON, and where (a byte offset into it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    offset: usize,
    message: String,
}

impl ParseError {
    /// The byte offset of the problem in the text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What is wrong there.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Reads one JSON value that is the whole of `text` (whitespace around it
/// allowed, nothing else).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser { text, bytes: text.as_bytes(), pos: 0 };
    p.skip_whitespace();
    let value = p.value(0)?;
    p.skip_whitespace();
    if p.pos < p.bytes.len() {
        return Err(p.error("unexpected text after the value"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError { offset: self.pos, message: message.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Consumes `c` (after whitespace) or fails saying what was expected.
    fn expect(&mut self, c: u8, what: &str) -> Result<(), ParseError> {
        self.skip_whitespace();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.error("expected a value, found the end of the text")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(_) => Err(self.error("expected a value")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error(format!("expected a value (`{word}`?)")))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.pos += 1; // '{'
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name (a string) in an object"));
            }
            let key = self.string()?;
            self.expect(b':', "`:` after a member name")?;
            self.skip_whitespace();
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}` in an object")),
            }
        }
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // '"'
        let mut out = String::new();
        let mut run = self.pos; // start of the bytes not yet copied
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    out.push_str(self.slice(run)?);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(self.slice(run)?);
                    self.pos += 1;
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                Some(c) if c < 0x20 => {
                    return Err(self.error(format!("control character 0x{c:02x} in a string (escape it)")));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// The text from `start` to the current position. Both ends sit next
    /// to ASCII bytes (quotes, backslashes, escapes), so they are character
    /// boundaries of the UTF-8 text; `get` still turns a mistake into an
    /// error rather than a panic.
    fn slice(&self, start: usize) -> Result<&str, ParseError> {
        self.text.get(start..self.pos).ok_or_else(|| self.error("string split inside a character"))
    }

    /// One escape, after its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let Some(c) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.pos += 1;
        let decoded = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => {
                self.pos -= 1;
                return Err(self.error(format!("invalid escape `\\{}`", char::from(c).escape_default())));
            }
        };
        out.push(decoded);
        Ok(())
    }

    /// The character of `\uXXXX` (after the `u`), joining a surrogate pair
    /// `\uD83D\uDE00` into one character.
    fn unicode_escape(&mut self) -> Result<char, ParseError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.bytes[self.pos..].starts_with(b"\\u") {
                    return Err(self.error(format!("high surrogate \\u{first:04X} without a low one after it")));
                }
                self.pos += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error(format!(
                        "high surrogate \\u{first:04X} followed by \\u{second:04X}, not a low surrogate"
                    )));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(self.error(format!("low surrogate \\u{first:04X} without a high one before it")));
            }
            other => other,
        };
        char::from_u32(code).ok_or_else(|| self.error(format!("\\u escape of U+{code:X} is no character")))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.error("expected 4 hex digits after \\u")),
            };
            v = v * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error("a number cannot have a leading zero"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after the decimal point"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        // ASCII only from start to here: a character boundary.
        let text = self.text.get(start..self.pos).ok_or_else(|| self.error("bad number"))?;
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(ParseError { offset: start, message: format!("number {text} is out of range") }),
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Value {
        match parse(text) {
            Ok(v) => v,
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    fn bad(text: &str) -> ParseError {
        match parse(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e,
        }
    }

    fn s(text: &str) -> String {
        match ok(text) {
            Value::String(s) => s,
            v => panic!("{text:?}: not a string: {v:?}"),
        }
    }

    #[test]
    fn literals_and_whitespace() {
        assert_eq!(ok("null"), Value::Null);
        assert_eq!(ok(" \t\r\ntrue \n"), Value::Bool(true));
        assert_eq!(ok("false"), Value::Bool(false));
        for t in ["nul", "tru", "True", "NULL", "nan", "Infinity", "-Infinity", "undefined", "truex"] {
            bad(t);
        }
        bad("");
        bad("   ");
        bad("\u{feff}null"); // a byte order mark is not whitespace
        bad("\u{a0}null"); // nor is a no-break space
        bad("\u{c}null"); // nor a form feed
    }

    #[test]
    fn numbers() {
        assert_eq!(ok("0"), Value::Int(0));
        assert_eq!(ok("-0"), Value::Int(0));
        assert_eq!(ok("42"), Value::Int(42));
        assert_eq!(ok("-17"), Value::Int(-17));
        assert_eq!(ok("9223372036854775807"), Value::Int(i64::MAX));
        assert_eq!(ok("-9223372036854775808"), Value::Int(i64::MIN));
        assert_eq!(ok("9223372036854775808"), Value::Float(9223372036854775808.0));
        assert_eq!(ok("0.5"), Value::Float(0.5));
        assert_eq!(ok("-0.0"), Value::Float(-0.0));
        assert_eq!(ok("1e3"), Value::Float(1000.0));
        assert_eq!(ok("1E+3"), Value::Float(1000.0));
        assert_eq!(ok("25e-2"), Value::Float(0.25));
        assert_eq!(ok("0.000000"), Value::Float(0.0));
        assert_eq!(ok("1.7976931348623157e308"), Value::Float(f64::MAX));
        assert_eq!(ok("1e-400"), Value::Float(0.0)); // underflow rounds to zero
        assert_eq!(ok("[1,2]"), Value::Array(vec![Value::Int(1), Value::Int(2)]));
        for t in ["01", "-01", "00", "+1", ".5", "1.", "1.e3", "-", "--1", "1e", "1e+", "0x10", "1_000", "- 1", "1.5.2"] {
            bad(t);
        }
        let e = bad("1e400");
        assert!(e.message().contains("out of range"), "{e}");
        bad("-1e400");
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(s(r#""""#), "");
        assert_eq!(s(r#""plain ascii""#), "plain ascii");
        assert_eq!(s(r#""\"\\\/\b\f\n\r\t""#), "\"\\/\u{8}\u{c}\n\r\t");
        assert_eq!(s(r#""\u0041\u00e9\u4E2D""#), "Aé中");
        assert_eq!(s(r#""\u0000""#), "\0");
        assert_eq!(s(r#""a\u0000b""#), "a\0b");
        // A surrogate pair is one character; raw UTF-8 passes through.
        assert_eq!(s(r#""\uD83D\uDE00""#), "😀");
        assert_eq!(s(r#""\ud83d\ude00x""#), "😀x");
        assert_eq!(s("\"é中😀\""), "é中😀");
        assert_eq!(s(r#""before\nafter é \u00e9""#), "before\nafter é é");
        assert_eq!(s(r#""\uDBFF\uDFFF""#), "\u{10FFFF}");
    }

    #[test]
    fn bad_strings() {
        for t in [
            r#""unterminated"#,
            r#""\"#,
            r#""\x41""#,
            r#""\U0041""#,
            r#""\u12""#,
            r#""\u12G4""#,
            r#""\uD83D""#,        // lone high surrogate
            r#""\uD83Dx""#,       // high surrogate, then text
            r#""\uD83D\u0041""#,  // high surrogate, then not a low one
            r#""\uD83D\uD83D""#,  // two highs
            r#""\uDE00""#,        // lone low surrogate
            r#""\uDE00\uD83D""#,  // a pair in the wrong order
            "\"tab\there\"",      // raw control characters
            "\"new\nline\"",
            "\"\u{1f}\"",
            "'single'",
        ] {
            bad(t);
        }
        let e = bad(r#""\uD83D""#);
        assert!(e.message().contains("surrogate"), "{e}");
        let e = bad("\"a\u{1}b\"");
        assert_eq!(e.offset(), 2);
    }

    #[test]
    fn arrays_and_objects() {
        assert_eq!(ok("[]"), Value::Array(vec![]));
        assert_eq!(ok("[ ]"), Value::Array(vec![]));
        assert_eq!(ok("{}"), Value::Object(vec![]));
        assert_eq!(ok(" { } "), Value::Object(vec![]));
        let v = ok(r#"{"a": [1, {"b": null}, "c"], "d": {"e": -2.5}, "f": true}"#);
        assert_eq!(v.get("a").and_then(Value::as_array).map(<[Value]>::len), Some(3));
        assert!(v.get("a").unwrap().as_array().unwrap()[1].get("b").unwrap().is_null());
        assert_eq!(v.get("d").and_then(|d| d.get("e")).and_then(Value::as_f64), Some(-2.5));
        assert_eq!(v.get("f").and_then(Value::as_bool), Some(true));
        assert_eq!(v.get("missing"), None);
        assert_eq!(Value::Int(1).get("a"), None);
        // Member order is kept; a repeated name: get finds the last.
        let v = ok(r#"{"z": 1, "a": 2, "z": 3}"#);
        let names: Vec<&str> = v.as_object().unwrap().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["z", "a", "z"]);
        assert_eq!(v.get("z").and_then(Value::as_i64), Some(3));
        // Escaped member names.
        assert_eq!(ok(r#"{"\u0061\n": 1}"#).get("a\n").and_then(Value::as_i64), Some(1));
    }

    #[test]
    fn bad_structures() {
        for t in [
            "[", "]", "[1", "[1,", "[1,]", "[,1]", "[1 2]", "[1,,2]", "{", "}", r#"{"a"}"#, r#"{"a":}"#,
            r#"{"a":1,}"#, r#"{,"a":1}"#, r#"{"a" 1}"#, r#"{"a":1 "b":2}"#, "{a:1}", "{1:1}", r#"{"a":1]"#,
            r#"["a"}"#, "[1] [2]", "1 2", "null null", "{}x", "[]]", r#""a" "b""#,
        ] {
            bad(t);
        }
        let e = bad("[1, 2,]");
        assert_eq!(e.offset(), 6);
        assert!(e.to_string().starts_with("invalid JSON at byte 6: "), "{e}");
    }

    #[test]
    fn depth_is_limited_without_overflowing_the_stack() {
        let ok_depth = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok_depth).is_ok());
        let too_deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(bad(&too_deep).message().contains("nested deeper"));
        let objects = r#"{"a":"#.repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
        bad(&objects);
        // A million brackets: an error, not a stack overflow.
        bad(&"[".repeat(1_000_000));
    }

    #[test]
    fn every_prefix_of_a_document_is_an_error_never_a_panic() {
        let doc = r#"{"k": [1, -2.5e3, "s\u00e9\uD83D\uDE00\n", true, false, null, {"x": {}}], "é": "ü"}"#;
        assert!(parse(doc).is_ok());
        for (end, _) in doc.char_indices().skip(1) {
            assert!(parse(&doc[..end]).is_err(), "prefix {:?} parsed", &doc[..end]);
        }
        // Every single-byte change that keeps UTF-8: parsed or refused, no panic.
        let bytes = doc.as_bytes();
        for i in 0..bytes.len() {
            for b in [b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'e', b'u', b' ', 0x01] {
                let mut m = bytes.to_vec();
                m[i] = b;
                if let Ok(text) = std::str::from_utf8(&m) {
                    let _ = parse(text);
                }
            }
        }
    }

    #[test]
    fn accessors() {
        assert_eq!(Value::Int(-1).as_u64(), None);
        assert_eq!(Value::Int(7).as_u64(), Some(7));
        assert_eq!(Value::Float(7.0).as_i64(), None);
        assert_eq!(Value::Int(7).as_f64(), Some(7.0));
        assert_eq!(Value::Null.as_str(), None);
        assert_eq!(Value::String("x".into()).as_str(), Some("x"));
        assert_eq!(Value::Bool(true).as_array(), None);
        assert_eq!(Value::Array(vec![]).as_object(), None);
    }
}
