//! Numeric tolerances for comparing recorded evidence with a new run.
//!
//! Another CPU, operating system or BLAS picks other kernels, and the same commit then gives
//! floats that differ in their last few digits. Evidence recorded on one machine must still
//! hold on another, so a floating-point value compares with `|now − recorded| ≤ atol +
//! rtol·max(|now|, |recorded|)`. Everything that is not a float — strings, labels, keys,
//! integers and counts, shapes — compares exactly, whatever the tolerance says.
//!
//! A scenario sets its default (`[tolerance] rtol/atol`, else [`Tolerance::DEFAULT`]) and may
//! override it per field (`[tolerance.fields]`), where a field is named the way differences
//! are reported: `metrics.r2`, `artifacts[predictions.csv].prediction`,
//! `artifacts[model.json].coef`. An override applies to the field and everything below it;
//! the longest matching name wins.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A relative and an absolute tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    /// Last-digit noise across CPUs and BLAS builds is about 1e-15 relative; iterative
    /// solvers amplify it by a few orders of magnitude. 1e-9 leaves that room and still
    /// catches any change a scientist would see (a metric moved by 1e-6 fails). `atol`
    /// covers values that are zero up to rounding (a centred mean of 1e-17).
    pub const DEFAULT: Tolerance = Tolerance {
        rtol: 1e-9,
        atol: 1e-12,
    };

    /// Compare a recorded float with a new one.
    pub fn check(self, recorded: f64, now: f64) -> NumericCheck {
        if recorded.is_nan() || now.is_nan() || recorded.is_infinite() || now.is_infinite() {
            let same = (recorded.is_nan() && now.is_nan()) || recorded == now;
            return NumericCheck {
                abs_err: if same { 0.0 } else { f64::INFINITY },
                rel_err: if same { 0.0 } else { f64::INFINITY },
                within: same,
            };
        }
        let abs_err = (now - recorded).abs();
        let scale = recorded.abs().max(now.abs());
        let rel_err = if scale == 0.0 { 0.0 } else { abs_err / scale };
        NumericCheck {
            abs_err,
            rel_err,
            within: abs_err <= self.atol + self.rtol * scale,
        }
    }
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rtol {:e}, atol {:e}", self.rtol, self.atol)
    }
}

/// The outcome of one float comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumericCheck {
    pub abs_err: f64,
    /// `abs_err / max(|recorded|, |now|)` (0 when both are 0).
    pub rel_err: f64,
    pub within: bool,
}

/// A scenario's tolerances: a default and per-field overrides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tolerances {
    pub default: Tolerance,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, Tolerance>,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            default: Tolerance::DEFAULT,
            fields: BTreeMap::new(),
        }
    }
}

impl Tolerances {
    /// The tolerance for `field`: the longest override that names it or a field above it.
    pub fn for_field(&self, field: &str) -> Tolerance {
        self.fields
            .iter()
            .filter(|(name, _)| covers(name, field))
            .max_by_key(|(name, _)| name.len())
            .map_or(self.default, |(_, t)| *t)
    }
}

/// Does the override `name` cover `field` (the field itself, or one below it)?
fn covers(name: &str, field: &str) -> bool {
    field == name
        || field
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Is `t` usable: finite and non-negative?
pub fn valid(t: f64) -> bool {
    t.is_finite() && t >= 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(x: f64, n: i64) -> f64 {
        f64::from_bits((x.to_bits() as i64 + n) as u64)
    }

    #[test]
    fn a_few_ulps_pass_and_a_millionth_fails() {
        let t = Tolerance::DEFAULT;
        for x in [0.35940880381708906, 3180.159648159229, -1.261985471714557] {
            assert!(t.check(x, ulps(x, 4)).within, "{x}");
            assert!(t.check(x, ulps(x, -4)).within, "{x}");
            assert!(!t.check(x, x * (1.0 + 1e-6)).within, "{x}");
        }
        // Below atol everything is rounding noise around zero.
        assert!(t.check(1e-300, 2e-300).within);
        assert!(t.check(0.0, 1e-17).within);
        assert!(!t.check(0.0, 1e-6).within);
        assert!(t.check(f64::NAN, f64::NAN).within);
        assert!(!t.check(f64::NAN, 1.0).within);
        assert!(!t.check(f64::INFINITY, f64::MAX).within);
        let c = t.check(2.0, 2.0 + 2e-6);
        assert!((c.rel_err - 1e-6).abs() < 1e-9 && (c.abs_err - 2e-6).abs() < 1e-15);
    }

    #[test]
    fn the_longest_override_wins_and_names_do_not_leak_into_neighbours() {
        let loose = Tolerance {
            rtol: 1e-6,
            atol: 0.0,
        };
        let looser = Tolerance {
            rtol: 1e-3,
            atol: 0.0,
        };
        let t = Tolerances {
            default: Tolerance::DEFAULT,
            fields: BTreeMap::from([
                ("metrics.r2".to_string(), loose),
                ("artifacts[a.csv]".to_string(), loose),
                ("artifacts[a.csv].x".to_string(), looser),
            ]),
        };
        assert_eq!(t.for_field("metrics.r2"), loose);
        assert_eq!(t.for_field("metrics.r2[3]"), loose);
        assert_eq!(t.for_field("metrics.r2_adjusted"), Tolerance::DEFAULT);
        assert_eq!(t.for_field("artifacts[a.csv].y[4]"), loose);
        assert_eq!(t.for_field("artifacts[a.csv].x[4]"), looser);
        assert_eq!(t.for_field("metrics.rmse"), Tolerance::DEFAULT);
    }
}
