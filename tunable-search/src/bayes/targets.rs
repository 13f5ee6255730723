//! # Standardized targets
//!
//! The surrogates model standardized targets (zero mean, unit deviation) and predict in the
//! targets' own units: [`standardization`] is the shift and scale every one of them uses.

/// Mean and population standard deviation of `y` (`(0, 1)` if empty, deviation 1 if zero).
pub(crate) fn standardization(y: &[f64]) -> (f64, f64) {
    if y.is_empty() {
        return (0.0, 1.0);
    }
    let n = y.len() as f64;
    let m = y.iter().sum::<f64>() / n;
    let var = y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n;
    let s = var.sqrt();
    (m, if s > 0.0 { s } else { 1.0 })
}
