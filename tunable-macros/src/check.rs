//! Cross-argument checks: builds the model of a tunable kernel from the parsed arguments,
//! collecting every mistake (each spanned on the offending token) instead of stopping at the
//! first. The search space is built here, at compile time, with the same engine as at run time,
//! so a constraint that does not parse, names an unknown parameter, or excludes every
//! configuration is a compile error.

use crate::attr::{Arg, OPTIONS, ParamDef, ParamLit};
use crate::source::{self, SourceFile};
use proc_macro2::Span;
use std::sync::Arc;
use syn::{Expr, Ident, LitStr};
use tunable_search::clock::Knob;
use tunable_search::objective::{Aim, Goal, Metric, Prefer};
#[cfg(feature = "search")]
use tunable_search::strategy;
use tunable_search::{Space, SpaceBuilder, SpaceError, Value};
use tunable_search::{defaults, suggest};

/// Most configurations `consts` instantiates the body for.
pub(crate) const MAX_CONST_INSTANCES: usize = 64;

/// The Rust type of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ParamTy {
    /// An integer type (`usize`, `i64`, or a literal's suffix).
    Int(String),
    Float,
    Bool,
    Str,
}

pub(crate) struct Param {
    pub name: Ident,
    pub values: Vec<ParamLit>,
    pub ty: ParamTy,
}

/// The `verify`, `answer` and `tolerance` options.
pub(crate) struct Verify {
    pub output: Expr,
    pub answer: Option<Expr>,
    pub tolerance: f64,
}

pub(crate) struct Model {
    pub params: Vec<Param>,
    pub constraints: Vec<LitStr>,
    pub key: Option<Expr>,
    /// Runs before every measured run while tuning (in-place kernels restore their input).
    pub restore: Option<Expr>,
    /// The device identity (default: the CPU's).
    pub device: Option<Expr>,
    /// The device's properties, bound to the constraints' `device.<property>` names while tuning.
    pub device_properties: Option<Expr>,
    /// The output checked while tuning, the answer it is checked against (default: the default
    /// configuration's output) and the tolerance.
    pub verify: Option<Verify>,
    pub budget: usize,
    pub strategy: String,
    /// The strategy's seed (`seed`, default `defaults::SEED`).
    pub seed: u64,
    /// The metrics (`metric`, repeatable), as written: `name = expression`.
    pub metrics: Vec<String>,
    /// What tuning pursues (`objective`, or `objectives`; default `["time"]`), as written.
    pub objectives: Vec<String>,
    /// The rule that chooses the shipped point of a front (`prefer`).
    pub prefer: Option<String>,
    pub repeats: u32,
    pub warmup: u32,
    /// Index into each parameter's values.
    pub default: Vec<usize>,
    pub name: String,
    pub consts: bool,
    pub space: Arc<Space>,
    /// The kernel's source files (`source = ...`), read and hashed.
    pub sources: Vec<SourceFile>,
}

/// Accumulates errors.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, span: Span, msg: impl std::fmt::Display) {
        let e = syn::Error::new(span, msg);
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub(crate) fn finish(&mut self) -> syn::Result<()> {
        self.0.take().map_or(Ok(()), Err)
    }
}

pub(crate) fn model(args: Vec<Arg>, fn_name: &Ident, fn_args: &[Ident]) -> syn::Result<Model> {
    let mut errs = Errors::default();
    let mut seen: Vec<String> = Vec::new();
    let mut defs: Vec<ParamDef> = Vec::new();
    let mut constraints = Vec::new();
    let (mut restore, mut device, mut verify, mut answer, mut tolerance) =
        (None, None, None, None, None);
    let mut device_properties = None;
    let (mut key, mut budget, mut strategy, mut repeats, mut warmup) = (
        None,
        defaults::BUDGET,
        None,
        defaults::REPEATS,
        defaults::WARMUP,
    );
    // The kernel's name names its files (`tuned/<name>.bin`): an identifier by the rule of
    // `tunable_search::name`, checked on the token it comes from.
    let (mut default, mut name, mut consts) =
        (None, syn::ext::IdentExt::unraw(fn_name).to_string(), false);
    let mut name_span = None;
    let mut seed = defaults::SEED;
    let (mut metrics, mut objectives, mut prefer) = (Vec::new(), Vec::new(), None);
    let mut sources = Vec::new();
    for arg in args {
        let id = arg.ident().to_string();
        // Constraints repeat; an unknown option is reported as such each time.
        let may_repeat = matches!(arg, Arg::Constraint(..) | Arg::Unknown(_))
            || matches!(&arg, Arg::Str(i, _) if i == "metric");
        if !may_repeat && seen.contains(&id) {
            let what = if OPTIONS.contains(&id.as_str()) {
                "option"
            } else {
                "parameter"
            };
            errs.push(arg.ident().span(), format!("duplicate {what} `{id}`"));
            continue;
        }
        seen.push(id.clone());
        match arg {
            Arg::Param(p) => {
                if let Some(a) = fn_args.iter().find(|a| **a == p.name) {
                    errs.push(
                        p.name.span(),
                        format!("parameter `{a}` shadows the function argument of the same name"),
                    );
                }
                defs.push(p);
            }
            Arg::Constraint(_, s) => constraints.push(s),
            Arg::Expr(i, e) => match i.to_string().as_str() {
                "restore" => restore = Some(*e),
                "device" => device = Some(*e),
                "device_properties" => device_properties = Some(*e),
                "verify" => verify = Some(*e),
                "answer" => answer = Some((i, *e)),
                _ => key = Some(*e),
            },
            Arg::Number(i, lit) => {
                let v = match &lit {
                    syn::Lit::Float(f) => f.base10_parse::<f64>().ok(),
                    syn::Lit::Int(n) => n.base10_parse::<f64>().ok(),
                    _ => None,
                };
                match v {
                    Some(v) if v.is_finite() && v >= 0.0 => tolerance = Some((i, v)),
                    _ => errs.push(
                        lit.span(),
                        "`tolerance` takes a non-negative number, e.g. `tolerance = 1e-4`",
                    ),
                }
            }
            Arg::Int(i, lit) if i == "seed" => match lit.base10_parse::<u64>() {
                Ok(v) => seed = v,
                _ => errs.push(lit.span(), "`seed` takes a whole number"),
            },
            Arg::Int(i, lit) => match lit.base10_parse::<u32>() {
                Ok(v) if v > 0 || i != "budget" => match i.to_string().as_str() {
                    "budget" => budget = v as usize,
                    "repeats" => repeats = v.max(1),
                    _ => warmup = v,
                },
                _ => errs.push(lit.span(), format!("`{i}` takes a positive integer")),
            },
            Arg::Str(i, s) if i == "strategy" => strategy = Some(s),
            Arg::Str(i, s) if i == "objective" => {
                if seen.iter().any(|s| s == "objectives") {
                    errs.push(i.span(), "give `objective` or `objectives`, not both");
                }
                objectives.push(s);
            }
            Arg::Strs(i, list) => {
                if seen.iter().any(|s| s == "objective") {
                    errs.push(i.span(), "give `objective` or `objectives`, not both");
                }
                if list.is_empty() {
                    errs.push(i.span(), "`objectives` names at least one objective");
                }
                objectives.extend(list);
            }
            Arg::Str(i, s) if i == "metric" => metrics.push(s),
            Arg::Str(i, s) if i == "prefer" => prefer = Some(s),
            Arg::Str(_, s) => {
                name = s.value();
                name_span = Some(s.span());
            }
            Arg::Default(i, items) => default = Some((i, items)),
            Arg::Sources(_, files) => {
                for f in &files {
                    match source::read(f) {
                        Ok(file) => sources.push(file),
                        Err(e) => errs.push(f.span(), e),
                    }
                }
            }
            Arg::Flag(_) => consts = true,
            Arg::Unknown(name) => errs.push(name.span(), unknown_option(&name)),
        }
    }
    if verify.is_none() {
        for (i, what) in [
            (answer.as_ref().map(|a| &a.0), "answer"),
            (tolerance.as_ref().map(|t| &t.0), "tolerance"),
        ] {
            if let Some(i) = i {
                errs.push(
                    i.span(),
                    format!("`{what}` needs `verify = <output>`: the output it checks"),
                );
            }
        }
    }
    let verify = verify.map(|output| Verify {
        output,
        answer: answer.map(|a| a.1),
        tolerance: tolerance.map_or(defaults::TOLERANCE, |t| t.1),
    });
    if let Err(e) = tunable_search::name::check(&name) {
        match name_span {
            Some(span) => errs.push(span, e),
            None => errs.push(
                fn_name.span(),
                format!("{e}: give the kernel a `name = \"...\"` that is one"),
            ),
        }
    }
    if defs.is_empty() {
        errs.push(
            Span::call_site(),
            "#[tunable] needs at least one parameter, e.g. `tile = [1, 2, 4]`",
        );
    }
    for d in &defs {
        check_clock(d, &mut errs);
    }
    let params: Vec<Param> = defs
        .into_iter()
        .filter_map(|d| check_param(d, &mut errs))
        .collect();
    let names: Vec<String> = params.iter().map(|p| p.name.to_string()).collect();
    let (objectives, prefer) = check_goal(&metrics, objectives, prefer, &names, &mut errs);
    errs.finish()?;

    // The space, with the run-time engine.
    let mut b = SpaceBuilder::new().name(&name);
    for p in &params {
        b = b.param(
            p.name.to_string(),
            p.values.iter().map(to_value).collect::<Vec<_>>(),
        );
    }
    b = b.constraints(constraints.iter().map(LitStr::value));
    let space = match b.build() {
        Ok(s) => s,
        Err(SpaceError::Constraint { index, error, .. }) => {
            return Err(syn::Error::new(
                constraints[index].span(),
                format!("invalid constraint: {error}"),
            ));
        }
        Err(e) => return Err(syn::Error::new(Span::call_site(), e.to_string())),
    };
    if space.is_empty() {
        let (span, msg) = match space.unsatisfiable_part() {
            Some((i, part)) => {
                let text = constraints[i].value();
                (
                    constraints[i].span(),
                    format!(
                        "no configuration satisfies `{}`",
                        &text[part.start..part.end]
                    ),
                )
            }
            None => (
                constraints.last().map_or(Span::call_site(), LitStr::span),
                "no configuration satisfies all constraints together".to_owned(),
            ),
        };
        return Err(syn::Error::new(span, msg));
    }
    let space = Arc::new(space);
    let strategy_text = strategy
        .as_ref()
        .map_or_else(|| defaults::STRATEGY.to_owned(), LitStr::value);
    // Only builds that tune use the strategy, and only they have the search engine to build it
    // (feature `search`, turned on by the facade's `autotune`).
    // With several objectives, a multi-objective strategy searches.
    #[cfg(feature = "search")]
    if let Err(e) = strategy_text
        .parse::<strategy::StrategySpec>()
        .and_then(|s| match objectives.len() {
            0 | 1 => strategy::build(&s, Arc::clone(&space), 1).map(|_| ()),
            n => strategy::build_multi(&s, Arc::clone(&space), n, 1).map(|_| ()),
        })
    {
        errs.push(strategy.as_ref().map_or(Span::call_site(), LitStr::span), e);
    }
    if consts && space.len() > MAX_CONST_INSTANCES {
        errs.push(
            Span::call_site(),
            format!(
                "`consts` instantiates the body once per valid configuration; this space has {} (at most {MAX_CONST_INSTANCES}): narrow it or drop `consts`",
                space.len()
            ),
        );
    }
    let default = match default {
        None => space.indices(0).into_iter().map(usize::from).collect(),
        Some((id, items)) => check_default(&id, &items, &params, &space, &mut errs),
    };
    errs.finish()?;
    Ok(Model {
        params,
        constraints,
        key,
        restore,
        device,
        device_properties,
        verify,
        budget,
        strategy: strategy_text,
        seed,
        metrics: metrics.iter().map(LitStr::value).collect(),
        objectives,
        prefer,
        repeats,
        warmup,
        default,
        name,
        consts,
        space,
        sources,
    })
}

/// Checks the goal (`metric`, `objective` or `objectives`, `prefer`) as the runtime will read
/// it ([`Goal`]), each error on the string it comes from: the objectives and the rule, as
/// written.
fn check_goal(
    metrics: &[LitStr],
    objectives: Vec<LitStr>,
    prefer: Option<LitStr>,
    params: &[String],
    errs: &mut Errors,
) -> (Vec<String>, Option<String>) {
    let params: Vec<&str> = params.iter().map(String::as_str).collect();
    // A metric that parses names an objective even when its names are wrong, so that the
    // objective naming it is not reported too.
    let (mut parsed, mut failed) = (Vec::new(), false);
    for m in metrics {
        match Metric::parse(&m.value()) {
            Ok(metric) => {
                if let Err(e) = metric.check(&params) {
                    errs.push(m.span(), e);
                    failed = true;
                }
                parsed.push(metric);
            }
            Err(e) => errs.push(m.span(), e),
        }
    }
    let mut aims = Vec::new();
    for o in &objectives {
        match Aim::parse(&o.value(), &parsed) {
            Ok(a) => aims.push(a),
            Err(e) => errs.push(o.span(), e),
        }
    }
    if failed || aims.len() < objectives.len() || parsed.len() < metrics.len() {
        return (Vec::new(), None);
    }
    if aims.is_empty() {
        aims.push(Aim::parse("time", &parsed).expect("time is an objective"));
    }
    let rule = prefer
        .as_ref()
        .and_then(|p| match Prefer::parse(&p.value(), &aims) {
            Ok(r) => Some(r),
            Err(e) => {
                errs.push(p.span(), e);
                None
            }
        });
    let written: Vec<String> = aims.iter().map(ToString::to_string).collect();
    if let Err(e) = Goal::from_parts(parsed, aims, rule) {
        let span = match e {
            tunable_search::objective::GoalError::Prefer { .. } => {
                prefer.as_ref().map(LitStr::span)
            }
            tunable_search::objective::GoalError::Taken(..) => metrics.last().map(LitStr::span),
            _ => objectives.last().map(LitStr::span),
        };
        errs.push(span.unwrap_or_else(Span::call_site), e);
    }
    (written, prefer.map(|p| p.value()))
}

/// "unknown option `x`, did you mean `y`?", or, with no option close to the name, the options
/// and what a parameter's value looks like.
fn unknown_option(name: &Ident) -> String {
    let name = name.to_string();
    match suggest::closest(&name, OPTIONS) {
        Some(option) => format!("unknown option `{name}`, did you mean `{option}`?"),
        None => format!(
            "unknown option `{name}`; options are: {}; a parameter takes a list `[v1, v2, ...]` or a range `a..=b step s`",
            OPTIONS.join(", ")
        ),
    }
}

/// A clock parameter (`nvml_gr_clock`, `nvml_mem_clock`, `nvml_pwr_limit`: see
/// [`tunable_search::clock`]) takes whole numbers in its unit; any other name with the knobs'
/// prefix is a misspelled knob, refused rather than tuned as a value nothing applies.
fn check_clock(d: &ParamDef, errs: &mut Errors) {
    let name = d.name.to_string();
    let Some(knob) = Knob::of_name(&name) else {
        if name.starts_with(Knob::PREFIX) {
            let hint = match suggest::closest(&name, Knob::NAMES) {
                Some(k) => format!("did you mean `{k}`?"),
                None => format!("the clock parameters are {}", Knob::NAMES.join(", ")),
            };
            errs.push(
                d.name.span(),
                format!(
                    "`{name}` is no clock parameter ({hint}); names starting with `{}` are kept for them",
                    Knob::PREFIX
                ),
            );
        }
        return;
    };
    for v in &d.values {
        match v {
            ParamLit::Int(i, _, span) => {
                if let Err(e) = knob.check(*i) {
                    errs.push(*span, e);
                }
            }
            other => errs.push(
                other.span(),
                format!(
                    "`{name}` takes whole numbers in {} (Kernel Tuner's unit), not a {}",
                    knob.unit(),
                    other.kind()
                ),
            ),
        }
    }
}

fn check_param(d: ParamDef, errs: &mut Errors) -> Option<Param> {
    if d.values.is_empty() {
        errs.push(d.list_span, format!("parameter `{}` has no values", d.name));
        return None;
    }
    let first = &d.values[0];
    let numeric = |v: &ParamLit| matches!(v, ParamLit::Int(..) | ParamLit::Float(..));
    let mut ok = true;
    for v in &d.values[1..] {
        if v.kind() != first.kind() && !(numeric(v) && numeric(first)) {
            errs.push(
                v.span(),
                format!(
                    "parameter `{}` mixes {} and {} values",
                    d.name,
                    first.kind(),
                    v.kind()
                ),
            );
            ok = false;
        }
    }
    for (i, v) in d.values.iter().enumerate() {
        if d.values[..i].iter().any(|w| same(v, w)) {
            errs.push(
                v.span(),
                format!("parameter `{}` lists this value twice", d.name),
            );
            ok = false;
        }
    }
    let ty = if d.values.iter().any(|v| matches!(v, ParamLit::Float(..))) {
        ParamTy::Float
    } else {
        match first {
            ParamLit::Int(..) => {
                let suffixes: Vec<&String> = d
                    .values
                    .iter()
                    .filter_map(|v| {
                        if let ParamLit::Int(_, s, _) = v {
                            s.as_ref()
                        } else {
                            None
                        }
                    })
                    .collect();
                if let Some(s) = suffixes.first() {
                    if suffixes.iter().any(|t| t != s) {
                        errs.push(
                            d.list_span,
                            format!("parameter `{}` mixes integer types", d.name),
                        );
                    }
                    ParamTy::Int((*s).clone())
                } else if d
                    .values
                    .iter()
                    .all(|v| matches!(v, ParamLit::Int(x, _, _) if *x >= 0))
                {
                    ParamTy::Int("usize".into())
                } else {
                    ParamTy::Int("i64".into())
                }
            }
            ParamLit::Bool(..) => ParamTy::Bool,
            ParamLit::Str(..) => ParamTy::Str,
            ParamLit::Float(..) => ParamTy::Float,
        }
    };
    ok.then_some(Param {
        name: d.name,
        values: d.values,
        ty,
    })
}

fn same(a: &ParamLit, b: &ParamLit) -> bool {
    match (to_value(a).as_f64(), to_value(b).as_f64()) {
        (Some(x), Some(y)) if !matches!(a, ParamLit::Bool(..)) => x == y,
        _ => to_value(a) == to_value(b),
    }
}

pub(crate) fn to_value(v: &ParamLit) -> Value {
    match v {
        ParamLit::Int(i, _, _) => Value::Int(*i),
        ParamLit::Float(f, _) => Value::Float(*f),
        ParamLit::Bool(b, _) => Value::Bool(*b),
        ParamLit::Str(s, _) => Value::Str(s.clone()),
    }
}

fn check_default(
    id: &Ident,
    items: &[(Ident, ParamLit)],
    params: &[Param],
    space: &Space,
    errs: &mut Errors,
) -> Vec<usize> {
    let mut idx: Vec<Option<usize>> = vec![None; params.len()];
    for (n, v) in items {
        let Some(pi) = params.iter().position(|p| p.name == *n) else {
            errs.push(n.span(), format!("`{n}` is not a parameter"));
            continue;
        };
        match params[pi].values.iter().position(|w| same(v, w)) {
            Some(i) => idx[pi] = Some(i),
            None => errs.push(v.span(), format!("not one of the values of `{n}`")),
        }
    }
    let missing: Vec<String> = params
        .iter()
        .zip(&idx)
        .filter(|(_, i)| i.is_none())
        .map(|(p, _)| p.name.to_string())
        .collect();
    if !missing.is_empty() && items.len() == idx.iter().flatten().count() {
        errs.push(
            id.span(),
            format!(
                "`default` must give every parameter; missing: {}",
                missing.join(", ")
            ),
        );
    }
    let idx: Vec<usize> = idx.into_iter().map(|i| i.unwrap_or(0)).collect();
    let as_u16: Vec<u16> = idx.iter().map(|&i| i as u16).collect();
    if missing.is_empty() && !space.contains(&as_u16) {
        errs.push(
            id.span(),
            "the default configuration violates the constraints",
        );
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_options_name_the_closest_option() {
        let msg = |n: &str| unknown_option(&Ident::new(n, Span::call_site()));
        assert_eq!(
            msg("budjet"),
            "unknown option `budjet`, did you mean `budget`?"
        );
        assert_eq!(
            msg("verfy"),
            "unknown option `verfy`, did you mean `verify`?"
        );
        assert_eq!(
            msg("Tolerence"),
            "unknown option `Tolerence`, did you mean `tolerance`?"
        );
        let far = msg("tile");
        assert!(far.starts_with("unknown option `tile`; options are: constraint, key,"));
        assert!(
            far.ends_with("a parameter takes a list `[v1, v2, ...]` or a range `a..=b step s`")
        );
    }
}
