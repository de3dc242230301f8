//! The output object as cwl-run prints it: JSON, indented, with one difference from
//! serde_json's own text. A `double` that holds a whole number beyond 2^53 (CWL's
//! `4200000000000000000000000000000000000000000`, a YAML or JSON integer literal too large for
//! an i64) is written as those digits, not as `4.2e42`: readers in languages with unbounded
//! integers (cwltest, in Python) read `4.2e42` as a float, which no longer equals the integer
//! the tool printed. The digits are the shortest ones that round-trip, so the value read back
//! as a double is the same.

use std::io;

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{Formatter, PrettyFormatter};

/// `object` as indented JSON text.
pub fn output_text(object: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, WholeDoubles::default());
    // Writing a Value into memory does not fail.
    if object.serialize(&mut ser).is_err() {
        return object.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| object.to_string())
}

/// 2^53: the whole numbers below it are exact in an f64 and printed as such anyway.
const EXACT_BELOW: f64 = 9_007_199_254_740_992.0;

/// A whole f64 at or beyond 2^53 as plain digits: the shortest round-trip mantissa (`4.2` of
/// `4.2e42`) shifted by its exponent with zeros.
fn whole_digits(value: f64) -> Option<String> {
    if !value.is_finite() || value.fract() != 0.0 || value.abs() < EXACT_BELOW {
        return None;
    }
    let sci = format!("{value:e}");
    let (mantissa, exp) = sci.split_once('e')?;
    let exp: usize = exp.parse().ok()?;
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // A whole number's mantissa has at most exp + 1 digits.
    let zeros = (exp + 1).checked_sub(digits.len())?;
    Some(format!("{sign}{digits}{}", "0".repeat(zeros)))
}

/// serde_json's pretty formatter, but for whole doubles beyond 2^53.
#[derive(Default)]
struct WholeDoubles(PrettyFormatter<'static>);

impl Formatter for WholeDoubles {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        match whole_digits(value) {
            Some(digits) => writer.write_all(digits.as_bytes()),
            None => self.0.write_f64(writer, value),
        }
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_doubles_beyond_2_pow_53_print_as_their_digits() {
        let big: f64 = "4200000000000000000000000000000000000000000"
            .parse()
            .unwrap();
        let text =
            output_text(&json!({"fifth": big, "neg": -1e42, "third": 2.3, "n": 23, "two": 2.0}));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert!(
            text.contains("\"fifth\": 4200000000000000000000000000000000000000000"),
            "{text}"
        );
        assert!(
            text.contains("\"neg\": -1000000000000000000000000000000000000000000"),
            "{text}"
        );
        assert!(text.contains("\"third\": 2.3"), "{text}");
        assert!(text.contains("\"two\": 2.0"), "{text}");
        assert!(text.contains("\"n\": 23"), "{text}");
        assert_eq!(back["fifth"].as_f64(), Some(big));
        // Indented as serde_json's pretty printer does.
        assert!(text.starts_with("{\n  \""), "{text}");
    }

    #[test]
    fn fractions_small_numbers_and_non_finite_keep_serde_json_s_text() {
        assert_eq!(whole_digits(1.5e300_f64.fract()), None);
        assert_eq!(whole_digits(1e15), None);
        assert_eq!(whole_digits(0.5), None);
        assert_eq!(
            whole_digits(9_007_199_254_740_992.0).as_deref(),
            Some("9007199254740992")
        );
    }
}
