//! Statistics over repeated runs (seeds): the mean with a 95% confidence interval, and the paired
//! difference between two policies run on the same seeds.
//!
//! **Interval.** For `n ≥ 2` values with mean `m` and sample standard deviation `s` (divisor
//! `n − 1`), the 95% interval is `m ± t(0.975, n − 1) · s / √n` — Student's t interval, which
//! assumes the per-seed values are independent draws from a roughly normal distribution (each
//! seed is an independent user timeline, page contents and access pattern). With 5 seeds
//! `t = 2.776`, so the half-width is 1.24 standard deviations.
//!
//! **Difference.** Two policies run on the same seeds are compared pairwise: `dᵢ = xᵢ − bᵢ` for
//! each seed `i` where both have a value, and the t interval above is taken over the `dᵢ` (the
//! paired t-test: the difference is significant at the two-sided 5% level exactly when this
//! interval excludes zero). Pairing removes the seed-to-seed variation both policies share (a
//! seed with a heavier timeline is heavier for every policy), so it detects smaller differences
//! than comparing two independent intervals.
//!
//! With fewer than two values there is no interval (`None`), and a difference without an interval
//! is never called significant.

use serde::{Deserialize, Serialize};

/// Two-sided 95% quantiles `t(0.975, df)` of Student's t distribution for df = 1..=30 (standard
/// table, e.g. NIST/SEMATECH e-Handbook of Statistical Methods §1.3.6.7.2).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// `t(0.975, df)`: the table for df ≤ 30, above it the Cornish–Fisher expansion around the normal
/// quantile 1.959964 (error < 0.001 for df > 30). `df = 0` has no quantile (infinite).
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        _ => {
            let z: f64 = 1.959_964;
            let v = df as f64;
            z + (z.powi(3) + z) / (4.0 * v) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// Mean and 95% interval of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Values the estimate is over.
    pub n: usize,
    pub mean: f64,
    /// Student t 95% interval `[low, high]`; absent with fewer than two values.
    pub ci95: Option<[f64; 2]>,
}

impl Estimate {
    /// Of `values` (non-finite values are left out); `None` when no value is left.
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let n = v.len();
        if n == 0 {
            return None;
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let ci95 = (n >= 2).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t975(n - 1) * (var / n as f64).sqrt();
            [mean - half, mean + half]
        });
        Some(Estimate { n, mean, ci95 })
    }

    /// Half the interval's width (absent without an interval).
    pub fn half_width(&self) -> Option<f64> {
        self.ci95.map(|[lo, hi]| (hi - lo) / 2.0)
    }

    /// Whether the interval excludes zero (never without an interval).
    pub fn excludes_zero(&self) -> bool {
        self.ci95.is_some_and(|[lo, hi]| lo > 0.0 || hi < 0.0)
    }

    /// Rounded to 3 decimals for the report (byte-stable, no float noise).
    pub fn rounded(self) -> Estimate {
        let r = crate::model::round3;
        Estimate {
            n: self.n,
            mean: r(self.mean),
            ci95: self.ci95.map(|[a, b]| [r(a), r(b)]),
        }
    }
}

/// The paired difference `x − base` over the seeds where both have a value (see the module doc).
pub fn paired_difference(x: &[Option<f64>], base: &[Option<f64>]) -> Option<Estimate> {
    let d: Vec<f64> = x
        .iter()
        .zip(base)
        .filter_map(|(a, b)| Some((*a)? - (*b)?))
        .collect();
    Estimate::of(&d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_table_and_the_normal_limit() {
        assert_eq!(t975(4), 2.776);
        assert!((t975(40) - 2.021).abs() < 0.001, "{}", t975(40));
        assert!((t975(60) - 2.000).abs() < 0.001, "{}", t975(60));
        assert!((t975(120) - 1.980).abs() < 0.001, "{}", t975(120));
        assert!(t975(100_000) > 1.959 && t975(100_000) < 1.961);
        assert!(t975(0).is_infinite());
        // Decreasing in df.
        for df in 1..200 {
            assert!(t975(df + 1) < t975(df), "df {df}");
        }
    }

    #[test]
    fn interval_of_a_known_sample() {
        // 1..=5: mean 3, s = sqrt(2.5), half = 2.776 * sqrt(2.5 / 5) = 1.963.
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(e.n, 5);
        assert_eq!(e.mean, 3.0);
        assert!((e.half_width().unwrap() - 1.963).abs() < 0.001);
        assert!(e.excludes_zero());
        let one = Estimate::of(&[7.0]).unwrap();
        assert_eq!(one.ci95, None);
        assert!(!one.excludes_zero());
        assert_eq!(Estimate::of(&[]), None);
        assert_eq!(Estimate::of(&[f64::NAN]), None);
        // Constant values: zero-width interval at the mean.
        let c = Estimate::of(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(c.ci95, Some([2.0, 2.0]));
    }

    #[test]
    fn pairing_removes_shared_seed_variation() {
        // Seeds differ a lot, the policy is always 1 lower: the paired difference is exactly -1
        // (significant), while the two independent intervals overlap widely.
        let base = [Some(10.0), Some(50.0), Some(30.0), Some(80.0), Some(20.0)];
        let x: Vec<Option<f64>> = base.iter().map(|b| b.map(|v| v - 1.0)).collect();
        let d = paired_difference(&x, &base).unwrap();
        assert_eq!(d.mean, -1.0);
        assert!(d.excludes_zero());
        // A difference whose sign flips between seeds is not significant.
        let noisy = [Some(11.0), Some(49.0), Some(31.0), Some(79.0), Some(20.0)];
        let d = paired_difference(&noisy, &base).unwrap();
        assert!(!d.excludes_zero(), "{d:?}");
        // Seeds where either side is absent are left out of the pairs.
        let gaps = [None, Some(49.0), Some(29.0), Some(79.0), Some(19.0)];
        assert_eq!(paired_difference(&gaps, &base).unwrap().n, 4);
    }
}
