//! # Convergence plots
//!
//! A self-contained SVG: for each strategy, the median (line) and the interquartile range (band)
//! over runs of the best-so-far objective divided by the optimum, against evaluations.
//!
//! # Anytime plots
//!
//! [`anytime_svg`]: for each strategy, the mean anytime score over a group of caches (the
//! fixed-window score at each checkpoint, see [`crate::anytime`]) as a line over evaluations,
//! with random search at 0.

use std::fmt::Write;

const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// The SVG text for one cache. `curves`: per strategy, its runs' best-so-far sequences;
/// `baseline`: the expected best-so-far of random search, drawn dashed.
pub(crate) fn convergence_svg(
    title: &str,
    optimum: f64,
    budget: usize,
    baseline: &[f64],
    curves: &[(String, Vec<Vec<f64>>)],
) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 520.0, 70.0, 230.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    // Quartiles per strategy and evaluation, relative to the optimum.
    let stats: Vec<(String, Vec<[f64; 3]>)> = curves
        .iter()
        .map(|(name, runs)| {
            let q = (0..budget)
                .map(|t| {
                    let mut v: Vec<f64> = runs
                        .iter()
                        .filter_map(|r| r.get(t).or(r.last()))
                        .map(|b| b / optimum)
                        .collect();
                    v.sort_by(f64::total_cmp);
                    let at = |p: f64| {
                        v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                            .copied()
                            .unwrap_or(f64::NAN)
                    };
                    [at(0.25), at(0.5), at(0.75)]
                })
                .collect();
            (name.clone(), q)
        })
        .collect();
    // The y range: from 1 (the optimum) to the largest median after 10% of the budget.
    let t0 = budget / 10;
    let ymax = stats
        .iter()
        .flat_map(|(_, q)| q.iter().skip(t0).map(|x| x[2]))
        .filter(|v| v.is_finite())
        .fold(1.05f64, f64::max)
        .min(10.0);
    let x = |t: usize| left + pw * t as f64 / budget.max(2).saturating_sub(1) as f64;
    let y = |v: f64| top + ph * (1.0 - (v.clamp(1.0, ymax) - 1.0) / (ymax - 1.0));
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="22" font-size="15" text-anchor="middle">{title}: best found / optimum (median, IQR)</text>
<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>
"##,
        left + pw / 2.0
    );
    for k in 0..=5 {
        let v = 1.0 + (ymax - 1.0) * k as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y0:.1}" y2="{y0:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v:.2}</text>"##,
            left + pw,
            left - 6.0,
            y(v) + 4.0,
            y0 = y(v)
        );
    }
    for k in 0..=4 {
        let t = (budget.saturating_sub(1)) * k / 4;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            x(t),
            top + ph + 18.0,
            t + 1
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">evaluations</text>"#,
        left + pw / 2.0,
        h - 10.0
    );
    let base: Vec<String> = baseline
        .iter()
        .take(budget)
        .enumerate()
        .map(|(t, v)| format!("{:.1},{:.1}", x(t), y(v / optimum)))
        .collect();
    let ly = top + 14.0 + 18.0 * stats.len() as f64;
    let _ = writeln!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#000" stroke-width="1.2" stroke-dasharray="5,4"/>
<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="#000" stroke-dasharray="5,4"/><text x="{}" y="{}">random (expected)</text>"##,
        base.join(" "),
        w - right + 15.0,
        w - right + 40.0,
        w - right + 46.0,
        ly + 4.0
    );
    for (i, (name, q)) in stats.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let upper: Vec<String> = q
            .iter()
            .enumerate()
            .map(|(t, v)| format!("{:.1},{:.1}", x(t), y(v[2])))
            .collect();
        let lower: Vec<String> = q
            .iter()
            .enumerate()
            .rev()
            .map(|(t, v)| format!("{:.1},{:.1}", x(t), y(v[0])))
            .collect();
        let _ = writeln!(
            s,
            r#"<polygon points="{} {}" fill="{c}" fill-opacity="0.12" stroke="none"/>"#,
            upper.join(" "),
            lower.join(" ")
        );
        let med: Vec<String> = q
            .iter()
            .enumerate()
            .map(|(t, v)| format!("{:.1},{:.1}", x(t), y(v[1])))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1.8"/>"#,
            med.join(" ")
        );
        legend_entry(&mut s, w - right, top + 14.0 + 18.0 * i as f64, c, name);
    }
    s.push_str("</svg>\n");
    s
}

/// One legend row at height `ly`, right of the plot area that ends at `x`: a line in
/// `colour`, then `name`.
fn legend_entry(s: &mut String, x: f64, ly: f64, colour: &str, name: &str) {
    let _ = writeln!(
        s,
        r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
        x + 15.0,
        x + 40.0,
        x + 46.0,
        ly + 4.0,
        escape(name)
    );
}

fn escape(name: &str) -> String {
    name.replace('&', "&amp;").replace('<', "&lt;")
}

/// The SVG text of the anytime plot of one group of cases. `series`: per strategy, its mean
/// score at each of `checkpoints` (`NaN` where undefined, left out of the line).
pub(crate) fn anytime_svg(
    title: &str,
    checkpoints: &[usize],
    series: &[(String, Vec<f64>)],
) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 520.0, 70.0, 230.0, 40.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let values = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((0.0f64, 0.1f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = ((lo * 10.0).floor() / 10.0, (hi * 10.0).ceil() / 10.0);
    let kmax = checkpoints.iter().copied().max().unwrap_or(1).max(1) as f64;
    let x = |k: usize| left + pw * k as f64 / kmax;
    let y = |v: f64| top + ph * (hi - v) / (hi - lo);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="22" font-size="15" text-anchor="middle">{}: anytime score (mean over cases)</text>
<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>
"##,
        left + pw / 2.0,
        escape(title)
    );
    let step = [0.1, 0.2, 0.5, 1.0]
        .into_iter()
        .find(|st| (hi - lo) / st <= 10.5)
        .unwrap_or(2.0);
    for k in 0..=((hi - lo) / step).round() as usize {
        let v = lo + step * k as f64;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y0:.1}" y2="{y0:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v:.1}</text>"##,
            left + pw,
            left - 6.0,
            y(v) + 4.0,
            y0 = y(v)
        );
    }
    for &k in checkpoints {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{k}</text>"#,
            x(k),
            top + ph + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">evaluations</text>
<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">score (0 = random, 1 = optimum at once)</text>"#,
        left + pw / 2.0,
        h - 10.0,
        top + ph / 2.0,
        top + ph / 2.0
    );
    let ly = top + 14.0 + 18.0 * series.len() as f64;
    let _ = writeln!(
        s,
        r##"<line x1="{left}" x2="{}" y1="{y0:.1}" y2="{y0:.1}" stroke="#000" stroke-width="1.2" stroke-dasharray="5,4"/>
<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="#000" stroke-dasharray="5,4"/><text x="{}" y="{}">random search (0)</text>"##,
        left + pw,
        w - right + 15.0,
        w - right + 40.0,
        w - right + 46.0,
        ly + 4.0,
        y0 = y(0.0)
    );
    for (i, (name, means)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let points: Vec<(f64, f64)> = checkpoints
            .iter()
            .zip(means)
            .filter(|(_, v)| v.is_finite())
            .map(|(&k, &v)| (x(k), y(v)))
            .collect();
        let line: Vec<String> = points
            .iter()
            .map(|(a, b)| format!("{a:.1},{b:.1}"))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1.8"/>"#,
            line.join(" ")
        );
        for (a, b) in &points {
            let _ = writeln!(s, r#"<circle cx="{a:.1}" cy="{b:.1}" r="3" fill="{c}"/>"#);
        }
        legend_entry(&mut s, w - right, top + 14.0 + 18.0 * i as f64, c, name);
    }
    s.push_str("</svg>\n");
    s
}
