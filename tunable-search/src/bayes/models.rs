//! # The models
//!
//! What a `bayes` strategy learns from the results: the surrogate that picks, with its points
//! and its predictive check ([`Guard`], with `guard > 0` or `dual`), the second model of `dual`
//! ([`Challenger`]) and the feasibility model. They are built from the options here and
//! told the same results; the strategy decides when.

use super::challenger::Challenger;
use super::guard::Guard;
use super::options::{BayesOptions, SurrogateChoice};
use super::{
    ClusteredGp, Covariance, Feasibility, Gp, GpParams, Points, Surrogate, with_alignment,
    with_levels,
};
use crate::Space;
use std::sync::Arc;

/// The models of one `bayes` strategy.
pub(super) struct Models {
    /// The surrogate that picks.
    pub surrogate: Box<dyn Surrogate>,
    /// Its coordinates.
    pub points: Arc<Points>,
    /// Its predictive check.
    pub guard: Option<Guard>,
    /// The other model (`dual`). Whichever of the two predicts better is `surrogate`.
    pub challenger: Option<Challenger>,
    /// The probability of validity (`feasibility`).
    pub feasibility: Option<Feasibility>,
    /// The parameters while the early kernel holds (`early`, with `overlap` or
    /// `early_lengthscale`).
    early_params: Option<GpParams>,
    /// The valid results at which the hyperparameters are fitted next (`fit`).
    next_fit: usize,
}

impl Models {
    /// The models `options` describe over `space`, predicting `candidates` (ascending rows; the
    /// whole space if `None`), seeded.
    pub fn new(
        space: &Space,
        options: &BayesOptions,
        candidates: Option<Arc<[u32]>>,
        seed: u64,
    ) -> Models {
        let points = Arc::new(with_levels(
            with_alignment(space, options.align),
            space,
            options.levels,
        ));
        // The early kernel (the first `early` evaluations): its own lengthscale, the overlap part.
        let early_lengthscale = options.early_lengthscale > 0.0 && options.early > 0;
        let early = (early_lengthscale || options.overlap > 0.0) && options.early > 0;
        let lengthscale = if early_lengthscale {
            options.early_lengthscale
        } else {
            options.lengthscale
        };
        let kernel = Covariance::new(options.kernel, lengthscale)
            .and_then(|k| k.with_additive(options.additive))
            .and_then(|k| k.with_overlap(options.overlap))
            .map(|k| {
                k.with_overlap_dims(overlap_dims(space, options.overlap_levels))
                    .with_overlap_rest(options.overlap_rest)
            })
            .expect("checked option");
        let params = GpParams::new(kernel, options.noise).expect("checked option");
        let surrogate = |points: &Arc<Points>| -> Box<dyn Surrogate> {
            match options.surrogate {
                SurrogateChoice::Gp => {
                    Box::new(Gp::new(params, Arc::clone(points), candidates.clone()))
                }
                SurrogateChoice::Clustered(c) => Box::new(ClusteredGp::new(
                    params,
                    Arc::clone(points),
                    candidates.clone(),
                    c,
                    seed ^ 0x9e37_79b9_7f4a_7c15,
                )),
            }
        };
        let model = surrogate(&points);
        // The challenger sees the space with alignment coordinates of weight `dual` (none if
        // the space has no parameter that gets one); not with a trust region, whose box is in
        // the first model's coordinates.
        let challenger = (options.dual > 0.0 && options.trust == 0.0 && options.align == 0.0)
            .then(|| {
                Arc::new(with_levels(
                    with_alignment(space, options.dual),
                    space,
                    options.levels,
                ))
            })
            .filter(|p| p.dims() > points.dims())
            .map(|p| Challenger {
                surrogate: surrogate(&p),
                points: p,
                guard: Guard::new(options.guard_window),
            });
        let feasibility = options
            .feasibility
            .then(|| Feasibility::new(params, Arc::clone(&points), candidates));
        let guard =
            (options.guard > 0.0 || challenger.is_some()).then(|| Guard::new(options.guard_window));
        Models {
            surrogate: model,
            points,
            guard,
            challenger,
            feasibility,
            early_params: early.then_some(params),
            next_fit: options.init.max(3),
        }
    }

    /// Tells both models a valid result: target `y` at `row`. With `check`, each model's
    /// predictive check first compares its prediction with `earlier` (the targets told before).
    pub fn observe(&mut self, row: usize, y: f64, earlier: &[f64], check: bool) {
        if let Some(guard) = &mut self.guard
            && check
        {
            guard.record(self.surrogate.predict(row).mean, y, earlier);
        }
        self.surrogate.observe(row, y);
        if let Some(challenger) = &mut self.challenger {
            if check {
                let predicted = challenger.surrogate.predict(row).mean;
                challenger.guard.record(predicted, y, earlier);
            }
            challenger.surrogate.observe(row, y);
        }
    }

    /// Tells the feasibility model whether `row` is valid.
    pub fn observe_validity(&mut self, row: usize, valid: bool) {
        if let Some(f) = &mut self.feasibility {
            f.observe(row, valid);
        }
    }

    /// Drops both models' fantasies.
    pub fn clear_fantasies(&mut self) {
        self.surrogate.clear_fantasies();
        if let Some(challenger) = &mut self.challenger {
            challenger.surrogate.clear_fantasies();
        }
    }

    /// Conditions both models on `targets` instead of the targets told (see `clipping`).
    pub fn retarget(&mut self, targets: &[f64]) {
        self.surrogate.retarget(targets);
        if let Some(challenger) = &mut self.challenger {
            challenger.surrogate.retarget(targets);
        }
    }

    /// Makes the better predicting of the two models the one that picks
    /// ([`Challenger::takes_over`]). Both have no fantasies when this runs (at the end of a tell).
    pub fn choose(&mut self) {
        let (Some(first), Some(challenger)) = (&mut self.guard, &mut self.challenger) else {
            return;
        };
        if challenger.takes_over(first) {
            std::mem::swap(&mut self.surrogate, &mut challenger.surrogate);
            std::mem::swap(&mut self.points, &mut challenger.points);
            std::mem::swap(first, &mut challenger.guard);
        }
    }

    /// Ends the early kernel once `asked` reaches `early`: both models take `lengthscale` and
    /// drop the overlap part.
    pub fn end_early_kernel(&mut self, options: &BayesOptions, asked: usize) {
        let Some(early) = self.early_params else {
            return;
        };
        if asked < options.early {
            return;
        }
        let kernel = early
            .kernel
            .with_lengthscale(options.lengthscale)
            .and_then(|k| k.with_overlap(0.0))
            .expect("checked option");
        self.surrogate.set_params(GpParams { kernel, ..early });
        if let Some(challenger) = &mut self.challenger {
            challenger
                .surrogate
                .set_params(GpParams { kernel, ..early });
        }
        self.early_params = None;
    }

    /// Fits both models' hyperparameters (`fit`) once `valid` results have doubled since the
    /// last fit (the first after the initial sample).
    pub fn refit(&mut self, options: &BayesOptions, valid: usize) {
        if options.fit && valid >= self.next_fit {
            self.surrogate.fit_hyperparameters();
            if let Some(challenger) = &mut self.challenger {
                challenger.surrogate.fit_hyperparameters();
            }
            self.next_fit = 2 * valid;
        }
    }
}

/// The coordinates the overlap part compares: those of the varying parameters of at most
/// `levels` values (every coordinate if `levels` is 0).
fn overlap_dims(space: &Space, levels: usize) -> u64 {
    if levels == 0 {
        return u64::MAX;
    }
    space
        .varying_params()
        .into_iter()
        .enumerate()
        .filter(|&(j, p)| j < 64 && space.params()[p].values().len() <= levels)
        .fold(0, |m, (j, _)| m | 1 << j)
}
