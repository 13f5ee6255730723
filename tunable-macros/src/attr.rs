//! What the user wrote in `#[tunable(...)]`, parsed into typed values that keep their spans.

use proc_macro2::{Span, TokenTree};
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Lit, LitInt, LitStr, Token, bracketed, parenthesized};

/// Options of the attribute. Any other `name = [...]` or `name = a..=b` is a parameter; any other
/// name with another value (or none) is an unknown option.
pub(crate) const OPTIONS: [&str; 21] = [
    "constraint",
    "key",
    "budget",
    "strategy",
    "seed",
    "objective",
    "objectives",
    "metric",
    "prefer",
    "repeats",
    "warmup",
    "default",
    "name",
    "consts",
    "restore",
    "device",
    "device_properties",
    "verify",
    "answer",
    "tolerance",
    "source",
];

/// One parameter value literal.
#[derive(Clone, Debug)]
pub(crate) enum ParamLit {
    Int(i64, Option<String>, Span),
    Float(f64, Span),
    Bool(bool, Span),
    Str(String, Span),
}

impl ParamLit {
    pub(crate) fn span(&self) -> Span {
        match self {
            ParamLit::Int(_, _, s)
            | ParamLit::Float(_, s)
            | ParamLit::Bool(_, s)
            | ParamLit::Str(_, s) => *s,
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            ParamLit::Int(..) => "integer",
            ParamLit::Float(..) => "float",
            ParamLit::Bool(..) => "bool",
            ParamLit::Str(..) => "string",
        }
    }

    fn parse_one(input: ParseStream) -> syn::Result<Self> {
        let neg = input.peek(Token![-]);
        if neg {
            input.parse::<Token![-]>()?;
        }
        let lit: Lit = input.parse()?;
        let sign = if neg { -1 } else { 1 };
        Ok(match &lit {
            Lit::Int(i) => {
                let suffix = (!i.suffix().is_empty()).then(|| i.suffix().to_owned());
                ParamLit::Int(sign * i.base10_parse::<i64>()?, suffix, i.span())
            }
            Lit::Float(f) => ParamLit::Float(
                if neg {
                    -f.base10_parse::<f64>()?
                } else {
                    f.base10_parse::<f64>()?
                },
                f.span(),
            ),
            Lit::Bool(b) if !neg => ParamLit::Bool(b.value, b.span()),
            Lit::Str(s) if !neg => ParamLit::Str(s.value(), s.span()),
            _ => {
                return Err(syn::Error::new(
                    lit.span(),
                    "expected an integer, float, bool or string literal",
                ));
            }
        })
    }
}

/// A parameter: `name = [v, ...]` or `name = a..=b step s`.
#[derive(Clone, Debug)]
pub(crate) struct ParamDef {
    pub name: Ident,
    pub values: Vec<ParamLit>,
    /// Span of the value list (for "empty list" errors).
    pub list_span: Span,
}

/// One argument of the attribute.
pub(crate) enum Arg {
    Param(ParamDef),
    Constraint(Ident, LitStr),
    /// An option whose value is a Rust expression over the arguments (`key`, `restore`,
    /// `device`, `verify`, `answer`).
    Expr(Ident, Box<Expr>),
    Int(Ident, LitInt),
    /// `tolerance = <number>`.
    Number(Ident, Lit),
    Str(Ident, LitStr),
    Default(Ident, Vec<(Ident, ParamLit)>),
    /// `source = "file"` or `source = ("a", "b")`: the kernel's source files.
    Sources(Ident, Vec<LitStr>),
    /// `objectives = ["time", "energy"]`.
    Strs(Ident, Vec<LitStr>),
    Flag(Ident),
    /// A name that is no option, with a value that is no parameter's (not a list, not a range)
    /// or without a value; the value is skipped so that the other arguments are still checked.
    Unknown(Ident),
}

impl Arg {
    pub(crate) fn ident(&self) -> &Ident {
        match self {
            Arg::Param(p) => &p.name,
            Arg::Constraint(i, _)
            | Arg::Expr(i, _)
            | Arg::Int(i, _)
            | Arg::Number(i, _)
            | Arg::Str(i, _)
            | Arg::Default(i, _)
            | Arg::Sources(i, _)
            | Arg::Strs(i, _)
            | Arg::Flag(i)
            | Arg::Unknown(i) => i,
        }
    }
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        let opt = name.to_string();
        if !input.peek(Token![=]) {
            if opt == "consts" {
                return Ok(Arg::Flag(name));
            }
            if !OPTIONS.contains(&opt.as_str()) && (input.is_empty() || input.peek(Token![,])) {
                return Ok(Arg::Unknown(name));
            }
        }
        input.parse::<Token![=]>()?;
        match opt.as_str() {
            "constraint" => Ok(Arg::Constraint(name, input.parse()?)),
            "key" | "restore" | "device" | "device_properties" | "verify" | "answer" => {
                Ok(Arg::Expr(name, Box::new(input.parse()?)))
            }
            "tolerance" => Ok(Arg::Number(name, input.parse()?)),
            "budget" | "repeats" | "warmup" | "seed" => Ok(Arg::Int(name, input.parse()?)),
            "strategy" | "name" | "objective" | "metric" | "prefer" => {
                Ok(Arg::Str(name, input.parse()?))
            }
            "objectives" => {
                let content;
                bracketed!(content in input);
                let names = content.parse_terminated(<LitStr as Parse>::parse, Token![,])?;
                Ok(Arg::Strs(name, names.into_iter().collect()))
            }
            "default" => {
                let content;
                parenthesized!(content in input);
                let mut items = Vec::new();
                while !content.is_empty() {
                    let n: Ident = content.parse()?;
                    content.parse::<Token![=]>()?;
                    items.push((n, ParamLit::parse_one(&content)?));
                    if !content.is_empty() {
                        content.parse::<Token![,]>()?;
                    }
                }
                Ok(Arg::Default(name, items))
            }
            "source" => {
                if !input.peek(syn::token::Paren) {
                    return Ok(Arg::Sources(name, vec![input.parse()?]));
                }
                let content;
                parenthesized!(content in input);
                let files = content.parse_terminated(<LitStr as Parse>::parse, Token![,])?;
                Ok(Arg::Sources(name, files.into_iter().collect()))
            }
            "consts" => Err(syn::Error::new(
                name.span(),
                "`consts` is a flag: write it without a value",
            )),
            _ => {
                if input.peek(syn::token::Bracket) {
                    let content;
                    let bracket = bracketed!(content in input);
                    let mut values = Vec::new();
                    while !content.is_empty() {
                        values.push(ParamLit::parse_one(&content)?);
                        if !content.is_empty() {
                            content.parse::<Token![,]>()?;
                        }
                    }
                    return Ok(Arg::Param(ParamDef {
                        name,
                        values,
                        list_span: bracket.span.join(),
                    }));
                }
                if starts_range(input) {
                    return parse_range(name, input);
                }
                skip_value(input)?;
                Ok(Arg::Unknown(name))
            }
        }
    }
}

/// Whether the value is an integer range (`a..`, `a..=`, `-a..`): a parameter, even if its
/// bounds or step turn out malformed.
fn starts_range(input: ParseStream) -> bool {
    let fork = input.fork();
    if fork.peek(Token![-]) {
        let _ = fork.parse::<Token![-]>();
    }
    fork.parse::<LitInt>().is_ok() && fork.peek(Token![..])
}

/// Skips the value of an unknown option: an expression, else every token up to the next `,`.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    let fork = input.fork();
    if fork.parse::<Expr>().is_ok() && (fork.is_empty() || fork.peek(Token![,])) {
        input.advance_to(&fork);
        return Ok(());
    }
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// `a..b`, `a..=b`, optionally followed by `step s` (integers).
fn parse_range(name: Ident, input: ParseStream) -> syn::Result<Arg> {
    let start_span = input.span();
    let lo = signed_int(input)?;
    let inclusive = if input.peek(Token![..=]) {
        input.parse::<Token![..=]>()?;
        true
    } else {
        input.parse::<Token![..]>()?;
        false
    };
    let hi = signed_int(input)?;
    let mut step = 1i64;
    if input.peek(Ident) && input.fork().parse::<Ident>()? == "step" {
        input.parse::<Ident>()?;
        let s: LitInt = input.parse()?;
        step = s.base10_parse()?;
        if step <= 0 {
            return Err(syn::Error::new(s.span(), "step must be positive"));
        }
    }
    let end = if inclusive { hi } else { hi - 1 };
    let count = if end >= lo { (end - lo) / step + 1 } else { 0 };
    if count > 1 << 16 {
        return Err(syn::Error::new(
            start_span,
            "range has more than 65536 values",
        ));
    }
    let values = (0..count)
        .map(|k| ParamLit::Int(lo + k * step, None, start_span))
        .collect();
    Ok(Arg::Param(ParamDef {
        name,
        values,
        list_span: start_span,
    }))
}

fn signed_int(input: ParseStream) -> syn::Result<i64> {
    let neg = input.peek(Token![-]);
    if neg {
        input.parse::<Token![-]>()?;
    }
    let i: LitInt = input.parse()?;
    Ok(if neg {
        -i.base10_parse::<i64>()?
    } else {
        i.base10_parse()?
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::punctuated::Punctuated;

    /// What each argument parsed as: `P` parameter, `U` unknown option, `F` flag, `O` option.
    fn kinds(attr: &str) -> String {
        let args =
            syn::parse::Parser::parse_str(Punctuated::<Arg, Token![,]>::parse_terminated, attr)
                .unwrap();
        args.iter()
            .map(|a| match a {
                Arg::Param(_) => 'P',
                Arg::Unknown(_) => 'U',
                Arg::Flag(_) => 'F',
                _ => 'O',
            })
            .collect()
    }

    #[test]
    fn lists_and_ranges_are_parameters_other_values_unknown_options() {
        assert_eq!(
            kinds("budjet = 10, verfy = dst, stratgy = \"genetic\""),
            "UUU"
        );
        assert_eq!(
            kinds("budjet = [1, 2], tile = 1..=4 step 2, t = -2..2"),
            "PPP"
        );
        assert_eq!(
            kinds("budget = 10, verify = dst, strategy = \"genetic\""),
            "OOO"
        );
        assert_eq!(kinds("consts, cosnts, tile"), "FUU");
        assert_eq!(
            kinds("source = \"k.cl\", source = (\"a.cu\", \"b.cuh\")"),
            "OO"
        );
        assert_eq!(kinds("scale = 0.5..1.5, tile = [1]"), "UP");
    }

    #[test]
    fn an_unknown_option_value_is_skipped_up_to_its_comma() {
        // Commas inside generic arguments belong to the expression.
        assert_eq!(kinds("keey = f::<A, B>(n), tile = [1]"), "UP");
        // Not an expression: the tokens up to the next comma are skipped.
        assert_eq!(kinds("keey = n + , tile = [1]"), "UP");
        assert_eq!(kinds("defualt = (tile = 2), tile = [1, 2]"), "UP");
    }
}
