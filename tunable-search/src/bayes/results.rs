//! # The results told
//!
//! The valid results the strategy has been told, in order: the raw values (what the strategy
//! reports and ranks by), their positions and the targets the models see. Several parts of a
//! round read them: the fallback, polishing and the pool's local candidates rank them, the
//! predictive check compares a prediction with the targets told before it.

/// The valid results told, in order.
#[derive(Debug, Default)]
pub(super) struct Results {
    /// The raw values.
    pub values: Vec<f64>,
    /// Their positions.
    pub rows: Vec<usize>,
    /// Their targets, as the models see them before any cap.
    pub targets: Vec<f64>,
    /// The best result so far, `(position, value)`.
    pub best: Option<(usize, f64)>,
    /// Valid results told since the best improved last.
    pub since_best: usize,
}

impl Results {
    /// Records a valid result of `value` (target `target`) at `row`.
    pub fn record(&mut self, row: usize, value: f64, target: f64) {
        self.targets.push(target);
        self.values.push(value);
        self.rows.push(row);
        if self.improves(value) {
            self.best = Some((row, value));
            self.since_best = 0;
        } else {
            self.since_best += 1;
        }
    }

    /// Whether `value` is better than the best so far (true for the first).
    pub fn improves(&self, value: f64) -> bool {
        self.best.is_none_or(|(_, b)| value < b)
    }

    /// The number of valid results.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none is told.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The best value, 0 before the first.
    pub fn best_value(&self) -> f64 {
        self.best.map_or(0.0, |(_, b)| b)
    }

    /// The mean value.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// `(value, position)` pairs, best first (ties to the lower position).
    pub fn ranked(&self) -> Vec<(f64, usize)> {
        let mut found: Vec<(f64, usize)> = self
            .values
            .iter()
            .zip(&self.rows)
            .map(|(&v, &r)| (v, r))
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found
    }

    /// The median value, 0 before the first.
    pub fn median(&self) -> f64 {
        if self.values.is_empty() {
            return 0.0;
        }
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        }
    }
}
