//! Summaries of timing samples: median, p99 (nearest rank), min, max.

use std::time::Duration;

use serde::Serialize;

/// Samples in milliseconds, summarized.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarize `samples` (any unit; the caller says which).
    pub fn of(samples: &[f64]) -> Summary {
        let mut s: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        if s.is_empty() {
            return Summary {
                n: 0,
                median: f64::NAN,
                p99: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        Summary {
            n: s.len(),
            median: percentile(&s, 0.50),
            p99: percentile(&s, 0.99),
            min: s[0],
            max: s[s.len() - 1],
        }
    }

    /// Summarize durations in milliseconds.
    pub fn ms(samples: &[Duration]) -> Summary {
        Summary::of(&samples.iter().map(|d| ms(*d)).collect::<Vec<_>>())
    }
}

/// Nearest-rank percentile of sorted samples (the median of an even count is the mean of
/// the two middle ones).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.len().is_multiple_of(2) && (p - 0.5).abs() < f64::EPSILON {
        let i = sorted.len() / 2;
        return (sorted[i - 1] + sorted[i]) / 2.0;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Milliseconds of a duration.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Round to `digits` decimals (for the report).
pub fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p99() {
        let s = Summary::of(&(1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!(s.median, 50.5);
        assert_eq!(s.p99, 99.0);
        assert_eq!((s.min, s.max), (1.0, 100.0));
        assert_eq!(Summary::of(&[3.0, 1.0, 2.0]).median, 2.0);
    }
}
