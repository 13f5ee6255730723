//! # tunable-macros
//!
//! The `#[tunable]` attribute. Use it through the `tunable` crate (`use tunable::tunable;`); the
//! generated code refers to `::tunable::__private`. The attribute's reference (every option, its
//! default, examples) is the documentation of [`macro@tunable`], shown on `tunable::tunable`.
//!
//! Pipeline: `attr` parses what the user wrote, `check` builds the model and the search
//! space at compile time (collecting every mistake, each spanned), `expand` emits the code.

mod attr;
mod check;
mod expand;
mod source;
mod wgsl;

use proc_macro::TokenStream;
use syn::punctuated::Punctuated;
use syn::{ImplItem, ItemFn, ItemImpl, Token, parse_macro_input};

/// Makes a function tunable: its parameters become locals of the body, and an entry point runs
/// the configuration tuned for this device and problem size.
///
/// ```
/// use tunable::tunable;
///
/// #[tunable(
///     chunk = [1, 2, 4, 8],
///     unroll = 1..=4,
///     constraint = "chunk * unroll <= 16",
///     key = tunable::key::next_power_of_two(x.len() as u64),
/// )]
/// pub fn sum(x: &[f32]) -> f32 {
///     // `chunk` and `unroll` are locals of type `usize` here.
///     x.chunks(chunk * unroll).map(|c| c.iter().sum::<f32>()).sum()
/// }
///
/// // The tuned variant (without the `autotune` feature and a tuned file: the default one).
/// assert_eq!(sum(&[1.0, 2.0, 3.0]), 6.0);
/// // One given variant, and the search space.
/// assert_eq!(sum_with(&SumParams { chunk: 2, unroll: 4 }, &[1.0, 2.0]), 3.0);
/// assert_eq!(sum_space().len(), 14);
/// assert_eq!(SumParams::default(), SumParams { chunk: 1, unroll: 1 });
/// ```
///
/// Tuning happens on the first call for a (device, key) in a build with the `autotune` feature
/// (`autotune = ["tunable/autotune"]` in your crate); the winner is stored in
/// `tuned/<kernel>.bin`, and every later build bakes it in: the generated code makes cargo
/// rebuild when that file or `TUNABLE_DIR` changes. A build without the feature compiles no
/// tuner and no search engine, and compiles the body once more for each configuration it bakes,
/// with the parameters as constants (see [Baked configurations](#baked-configurations)). The
/// user guide's chapter "How tuning works" (`docs/src/how-it-works.md` in the repository)
/// describes the workflow, and `tunable::settings` the `TUNABLE_*` environment variables.
///
/// For a GPU kernel the winner's device binary (OpenCL program binary, CUDA PTX and CUBIN) is
/// stored too, in `tuned/<kernel>.artifacts/`; a build embeds those of its baked entries
/// (`Params::artifacts()`), and the backend loads one instead of compiling when it was built from
/// the same source, options and definitions for the device (the user guide's chapter "GPU
/// kernels"; the format is `tunable::tuned::artifact`).
///
/// # Parameters
///
/// Every `name = [v1, v2, ...]` or `name = a..=b` argument whose name is not an option is a
/// tunable parameter, visible in the body as a local of the same name:
///
/// - `name = [v1, v2, ...]`: integer, float, bool or string literals, one kind per parameter
///   (integers and floats may mix). The local's type is `usize` for integers (`i64` if a value
///   is negative, or the literals' suffix type: `[1u32, 2]`), `f64`, `bool` or `&'static str`.
/// - `name = a..b` or `name = a..=b`, optionally followed by `step s`: integers (at most 65536).
///
/// A parameter may not shadow an argument of the function. Any other value (a single literal, an
/// expression) makes the name an unknown option, reported with the closest option's name.
///
/// ## Clock parameters
///
/// Three names are kept for the GPU's settings, Kernel Tuner's names and units so that caches of
/// either tool read the same: `nvml_gr_clock` (the graphics clock, MHz), `nvml_mem_clock` (the
/// memory clock, MHz) and `nvml_pwr_limit` (the power limit, W). Their values are whole numbers
/// (a clock from 1 to 100000 MHz, a limit from 1 to 5000 W: a limit in milliwatts is refused),
/// checked at compile time; any other name starting with `nvml_` is refused as a misspelled
/// one. They are parameters like the others (fields of the parameter struct, names in
/// constraints), except that they are not passed to a GPU kernel's source as definitions.
///
/// Tuning sets them: before each configuration is measured, its clocks and power limit are
/// applied to the CUDA device the kernel runs on, through NVML; when the tuning ends (or panics,
/// or gets Ctrl-C) the settings in force before are restored. That takes root: without the
/// rights the tuning fails before any evaluation, saying how to get them. A shipped build never
/// changes a clock: `<kernel>_config(args).clocks()` and `cargo tunable show` give the tuned
/// settings and the `nvidia-smi` commands with which an operator applies them. See the guide's
/// chapter "Tuning clocks".
///
/// ```
/// # use tunable::tunable;
/// #[tunable(tile = [1, 2, 4], nvml_gr_clock = [1215, 1605, 1980], objective = "energy")]
/// fn scale(x: &mut [f32]) {
///     x.chunks_mut(tile).for_each(|c| c.iter_mut().for_each(|v| *v *= 2.0));
/// }
/// # let _ = ScaleParams::default().nvml_gr_clock;
/// ```
///
/// # Options
///
/// | option | value | default |
/// |---|---|---|
/// | `constraint` | a string in the constraint language; repeatable | none |
/// | `key` | an integer expression over the arguments | `0`: one key |
/// | `budget` | a positive integer | `100` |
/// | `strategy` | a strategy spec string | `"auto"` |
/// | `seed` | a whole number | `1` |
/// | `objective` | `"time"`, `"energy"`, `"edp"`, or `"max <metric>"` / `"min <metric>"` | `"time"` |
/// | `objectives` | `[objective, ...]`, several at once (instead of `objective`) | none |
/// | `metric` | `"name = expression"` in the constraint language; repeatable | none |
/// | `prefer` | a rule choosing the shipped point of the front, e.g. `"least_energy within 1.10 of fastest"` | the first objective's best |
/// | `repeats` | an integer | `7` |
/// | `warmup` | an integer | `1` |
/// | `default` | `(param = value, ...)`, every parameter | the first valid configuration |
/// | `name` | a string | the function's name |
/// | `consts` | a flag, no value | off |
/// | `restore` | an expression over the arguments | none |
/// | `device` | an expression over the arguments, `AsRef<str>` | this CPU |
/// | `device_properties` | an expression over the arguments, `DeviceProperties` | none: `device.` names unbound |
/// | `verify` | an expression over the arguments, the output | off |
/// | `answer` | an expression over the arguments | the default configuration's output |
/// | `tolerance` | a non-negative number | `1e-4` |
/// | `source` | a path, or `(path, ...)`, relative to this file | the files the body includes |
///
/// ## `constraint`
/// A condition every configuration must satisfy, over the parameters' names, in the constraint
/// language of `tunable::expr`, whose documentation is the language's reference (Python's
/// expression syntax as Kernel Tuner writes restrictions: arithmetic, chained comparisons,
/// `and`/`or`/`not`, `x in [..]`, `min`/`max`/`abs`). Checked at compile time: a syntax error, an unknown name
/// (with the closest one) or a constraint that no configuration satisfies is a compile error on
/// the string.
///
/// ## `key`
/// The problem-size key, an expression over the arguments cast `as u64`: each key is tuned and
/// baked separately, and a size never tuned uses the entry of the nearest tuned key. Bucket sizes
/// (`tunable::key::{next_power_of_two, anchor, round_up, log2_bucket}`) so that a shipped table
/// stays small.
///
/// ## `budget`, `strategy`
/// How many configurations one tuning evaluates at most, and how it searches:
/// any spec of `cargo tunable bench` (`"random"`, `"genetic:popsize=20"`, `"bayes"`, ...),
/// checked at compile time by builds with the `autotune` feature (the only ones that use it, and
/// the only ones that compile the search engine). `"auto"` is the strategy chosen on the shared benchmark
/// (`tunable_search::strategy::AUTO`). `TUNABLE_BUDGET` and `TUNABLE_STRATEGY` override both at run time.
#[cfg_attr(
    feature = "search",
    doc = "The syntax of a spec, and every strategy's options: [`StrategySpec`](tunable_search::strategy::StrategySpec)."
)]
#[cfg_attr(
    not(feature = "search"),
    doc = "The syntax of a spec, and every strategy's options: `tunable_search::strategy::StrategySpec` (documented in builds with the `autotune` feature, as on docs.rs)."
)]
///
/// ## `seed`
/// The strategy's seed. A strategy is deterministic for its seed: two tunings of the kernel with
/// the same seed ask for the same configurations in the same order, as long as they measure the
/// same results (timing noise can change a result, and a strategy that learns from them then
/// goes its own way from there; `"random"` and `"exhaustive"` never do). `TUNABLE_SEED` (and
/// `cargo tunable tune --seed`) overrides it at run time; another seed is another sample of the
/// same search.
///
/// ## `objective`
/// What tuning minimizes: `"time"`, the time of one run (the default); `"energy"`, the energy
/// of one run in joules; `"edp"`, the energy-delay product, energy times time; or a metric of
/// the kernel's with its direction, `"max gflops_per_watt"` (see `metric`). An energy
/// objective reads the device's energy meter (NVML on an NVIDIA GPU, RAPL on the CPU
/// packages): each configuration that passes `verify` is timed as usual, then run again for
/// about a second (`TUNABLE_ENERGY_SECONDS`) while the meter reads. The winner is the
/// configuration of least energy (or EDP); its time is still recorded. Where no meter can read
/// (no driver, counters only root may read), tuning fails before any evaluation with the
/// reason. `TUNABLE_OBJECTIVE` (and `cargo tunable tune --objective`) overrides it at run time.
/// Any other name is a compile error listing the accepted ones; so are `max` before `time`,
/// `energy` or `edp` (they are minimized), a metric without `max` or `min`, and another word
/// than those two. See the guide's chapter "Energy and several objectives".
///
/// ## `metric`
/// A quantity of your own, `metric = "name = expression"`, such as
/// `"gflops_per_watt = 2 * key**3 / energy / 1e9"`: the expression is in the constraint
/// language, over the measured quantities of one run in SI units (`time` in seconds, `energy`
/// in joules, `power` in watts, `edp` in joule-seconds), the parameters and `key`, the
/// problem-size key. Repeat the option for several metrics. An objective names a metric with
/// its direction (`objective = "max gflops_per_watt"`); a metric that reads `energy`, `power`
/// or `edp` needs an energy meter. Checked at compile time: a definition that does not parse,
/// an unknown name (with the closest one) or a metric named like a parameter, a quantity or
/// `key` is an error on its string.
///
/// ## `objectives`, `prefer`
/// `objectives = ["time", "energy"]` tunes for several objectives at once (measured ones and
/// metrics, written as for `objective`; give one of `objective` and `objectives`). The search
/// is multi-objective (`strategy` names one of
/// `tunable_search::strategy::MULTI_STRATEGY_NAMES`; `"auto"` by default), the tuned file keeps
/// the Pareto front of what was measured (`cargo tunable show` prints it), and the entry, the
/// configuration a build bakes, is the point `prefer` chooses: `"fastest"`,
/// `"least_<objective>"` (`"least_energy"`), `"most_<metric>"` for a maximized metric, or
/// `"<rule> within <factor> of <rule>"`, e.g. `"least_energy within 1.10 of fastest"`: the least
/// energy among the points at most 10% slower than the fastest. Without `prefer`, the first
/// objective's best. A rule that names no objective of the list, a factor below 1, or a rule
/// with a single objective is a compile error on the string. `TUNABLE_PREFER` (and
/// `cargo tunable tune --prefer`) overrides it at run time.
///
/// ```
/// # use tunable::tunable;
/// #[tunable(
///     tile = [1, 2, 4, 8],
///     key = x.len() as u64,
///     metric = "elements_per_joule = key / energy",
///     objectives = ["time", "max elements_per_joule"],
///     prefer = "most_elements_per_joule within 1.10 of fastest",
/// )]
/// fn scale(x: &mut [f32], s: f32) {
///     for c in x.chunks_mut(tile) {
///         c.iter_mut().for_each(|v| *v *= s);
///     }
/// }
/// # let mut x = [1.0; 4];
/// # scale(&mut x, 2.0);
/// # assert_eq!(x, [2.0; 4]);
/// ```
///
/// ## `repeats`, `warmup`
/// How each configuration is timed: `warmup` untimed runs, then `repeats` timed runs (at least
/// one) whose robust median is its time.
///
/// ```
/// # use tunable::tunable;
/// #[tunable(
///     block = [16, 32, 64],
///     budget = 20,
///     strategy = "genetic:popsize=10",
///     repeats = 3,
///     warmup = 0,
///     default = (block = 32),
///     name = "scaled_copy",
/// )]
/// fn scale(x: &mut [f32], s: f32) {
///     for c in x.chunks_mut(block) {
///         c.iter_mut().for_each(|v| *v *= s);
///     }
/// }
///
/// assert_eq!(ScaleParams::default().block, 32);
/// assert_eq!(scale_space().name(), Some("scaled_copy"));
/// ```
///
/// ## `default`
/// The configuration that runs when nothing is tuned, written `default = (p = v, ...)` with a
/// value for every parameter; it must satisfy the constraints. It is also `<Name>Params::default()`
/// and the reference output for `verify`.
///
/// ## `name`
/// The kernel's name in tuned files and journals: give two kernels with the same function name
/// (in different modules) different names.
///
/// ## `consts`
/// Instantiates the body once per valid configuration (at most 64), with each parameter a
/// `const` rather than a local: array lengths, unroll counts and SIMD widths become compile-time
/// facts, in tuning builds and shipped builds alike, and a parameter may be used where Rust wants
/// a constant (an array length, a const generic argument). Without it, shipped builds still run
/// their baked configurations with constants (see [Baked configurations](#baked-configurations)),
/// but the body must compile with the parameters as locals.
///
/// ```
/// # use tunable::tunable;
/// #[tunable(width = [4, 8], consts)]
/// fn horizontal_sum(x: &[f32]) -> f32 {
///     let mut lanes = [0.0f32; width]; // `width` is a `const usize`
///     for c in x.chunks(width) {
///         lanes.iter_mut().zip(c).for_each(|(l, v)| *l += v);
///     }
///     lanes.iter().sum()
/// }
///
/// assert_eq!(horizontal_sum_with(&HorizontalSumParams { width: 8 }, &[1.0; 20]), 20.0);
/// ```
///
/// ## `restore`
/// An expression over the arguments run before every measured run while tuning, and once more
/// before the caller's own run: kernels that work in place reset their input with it, since
/// every variant runs on the same arguments.
///
/// ## `device`
/// The identity of the device the call runs on, an expression over the arguments giving
/// something `AsRef<str>` (GPU backends provide one); tuned entries are kept per device. Default:
/// this CPU's model and core count.
///
/// ## `device_properties`
/// The device's properties (`tunable_search::space::DeviceProperties`), an expression over the
/// arguments evaluated once per device identity when tuning starts: the constraints'
/// `device.<property>` names are bound to its values, and the tuner searches only the
/// configurations the device can run. Without it, and at compile time, those names are unbound
/// and the conjuncts that read them hold (the space module's `device` page says why); a
/// configuration beyond the device then fails at launch, recorded as failed.
///
/// ## `verify`, `answer`, `tolerance`
/// With `verify = <output>` (anything implementing `tunable::verify::Output`: slices and
/// vectors of numbers, device buffers), each variant's first run while tuning is checked against
/// `answer`, or by default against the output of the default configuration run once before
/// tuning; an element differing by more than `tolerance * max(1, |expected|)` makes the variant
/// a failed configuration (`wrong output: ...`). `answer` and `tolerance` need `verify`.
///
/// ```
/// # use tunable::tunable;
/// #[tunable(
///     unroll = [1, 2, 4],
///     device = gpu_name,
///     restore = out.fill(0.0),
///     verify = out,
///     answer = expected,
///     tolerance = 1e-6,
/// )]
/// fn accumulate(gpu_name: &str, x: &[f64], out: &mut [f64], expected: &[f64]) {
///     for (o, c) in out.iter_mut().zip(x.chunks(unroll)) {
///         *o += c.iter().sum::<f64>();
///     }
/// }
///
/// let mut out = [0.0; 2];
/// accumulate("cpu", &[1.0, 2.0], &mut out, &[1.0, 2.0]);
/// assert_eq!(out, [1.0, 2.0]);
/// ```
///
/// ## `source`
/// The files a kernel's source text comes from, each relative to the file that holds the
/// attribute, as `include_str!` takes them: `source = "vector_add.wgsl"`, or
/// `source = ("gemm.cu", "common.cuh")`. Without the option the attribute finds them itself:
/// the files the body includes with `include_str!` of a literal path, directly or through a
/// `static` or `const` of the same file that the body names (`&VECTOR_ADD` below). Name them
/// when the source comes from elsewhere (another module, a generated file).
///
/// A tuning records the hash of each file's text in every entry it stores; a later build whose
/// files hash otherwise does not bake those entries (nor embed their device binaries): it
/// warns, naming the kernel, the entries and `cargo tunable tune --kernel <name>`, and the calls
/// run the default configuration until the kernel is tuned again. A source neither found nor
/// named is not checked at build time; a baked configuration that then fails still falls back
/// to the default at run time (see [What is generated](#what-is-generated)). The files are
/// included in the build, so an edit rebuilds the crate.
///
/// ```text
/// static VECTOR_ADD: Source = Source::new("vector_add", include_str!("vector_add.wgsl"));
///
/// // Found: the body names VECTOR_ADD. `source = "vector_add.wgsl"` would say the same.
/// #[tunable(block_size_x = [64, 128, 256], device = gpu.device_id())]
/// pub fn vector_add(gpu: &Wgpu, /* ... */) -> Result<(), WgpuError> {
///     gpu.kernel(&VECTOR_ADD, params)? /* ... */
/// }
/// ```
///
/// # What is generated
///
/// For `fn matmul(args...)`, beside the function:
/// - `MatmulParams`: a `Copy`, `Debug`, `PartialEq`, serde struct with one public field per
///   parameter; `Default` is the default configuration, and it implements `tunable::Params`
///   (with `artifacts()` returning the device binaries embedded for the baked entries).
/// - `matmul_space()`: the search space, `&'static Arc<tunable::Space>`.
/// - `matmul_with(&params, args...)`: runs one variant through the generic body, without
///   tuning; inside the body `params` is the running configuration, which GPU kernels pass to
///   their backend.
/// - `matmul(args...)`: runs the tuned variant for this device and key (a baked one as its
///   instance with constants, see [Baked configurations](#baked-configurations)).
/// - `matmul_config(args...)`: the configuration `matmul(args...)` would run and where it comes
///   from (`tunable::Choice`: baked, stored, tuned by this process, or the default, and whether
///   the call would tune first), without running anything.
///
/// A kernel returning `Result` reports a variant's `Err(e)` as a failed configuration whose
/// reason is `e`'s `Display` (else its `Debug`); a variant that panics fails the same way. In a
/// build without the `autotune` feature, a baked or portable configuration whose call returns
/// `Err` (its program no longer builds, it breaks a limit of this device) does not fail the
/// call: the entry point says so in one line on stderr and runs the default configuration
/// instead (after `restore`), as it does from then on for that key.
///
/// # Baked configurations
///
/// A build without the `autotune` feature compiles, beside the generic body of `<name>_with`
/// (the parameters as run-time locals), one more copy of the body for each distinct
/// configuration it can run from the tuned file: the winner of each (device, key) entry and the
/// portable candidates for devices nobody tuned on (a handful, whatever the size of the space).
/// In each copy every parameter is a `const` (`const bm: usize = 64;`) and `params` the
/// constant configuration, so it compiles as if written by hand with those values. The entry
/// point runs the copy of the configuration it selects; the default configuration (nothing
/// baked), `<name>_with` and every call of a build with the `autotune` feature run the generic
/// body. A parameter the body rebinds (`let tile = tile.min(n);`, a closure argument or a
/// pattern of that name) stays a local holding the value in the copies; a function returning
/// `impl Trait` has no copies. The copies are private functions named `__tunable_<name>_<i>`.
///
/// # Methods
///
/// Put `#[tunable(...)]` on each tunable method and a bare `#[tunable]` on the impl block, which
/// emits the parameter structs beside it, named after the type and the method:
///
/// ```
/// # use tunable::tunable;
/// struct Conv { scale: f32 }
///
/// #[tunable]
/// impl Conv {
///     #[tunable(tile = [1, 2, 4])]
///     fn run(&self, x: &mut [f32]) {
///         for c in x.chunks_mut(tile) {
///             c.iter_mut().for_each(|v| *v *= self.scale);
///         }
///     }
/// }
///
/// let mut x = [1.0; 3];
/// Conv { scale: 2.0 }.run_with(&ConvRunParams { tile: 4 }, &mut x);
/// assert_eq!(x, [2.0; 3]);
/// assert_eq!(Conv::run_space().len(), 3);
/// ```
///
/// # Compile errors
///
/// Mistakes are compile errors spanned on the offending token: an unknown option (`budjet = 10`
/// gives "unknown option `budjet`, did you mean `budget`?"), a duplicate parameter or option, an
/// empty or mixed-kind value list, a parameter shadowing an argument, a malformed or unsatisfiable
/// constraint, an unknown name in a constraint, a malformed strategy, a `default` missing a
/// parameter or violating the constraints, `answer` or `tolerance` without `verify`, `consts` over
/// more than 64 configurations.
#[proc_macro_attribute]
pub fn tunable(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.clone().into();
    if let Ok(imp) = syn::parse::<ItemImpl>(item.clone()) {
        if !args.is_empty() {
            let err = syn::Error::new(
                proc_macro2::TokenStream::from(args)
                    .into_iter()
                    .next()
                    .map_or_else(proc_macro2::Span::call_site, |t| t.span()),
                "on an impl block, #[tunable] takes no arguments: put them on the tunable methods",
            );
            let err = err.into_compile_error();
            return quote::quote!(#err #item2).into();
        }
        return expand_impl(imp).unwrap_or_else(|e| {
            let err = e.into_compile_error();
            quote::quote!(#err #item2).into()
        });
    }
    let f = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        // Not a function: say so, and still emit the item so the user sees their own errors.
        Err(e) => {
            let err = syn::Error::new(e.span(), "#[tunable] applies to functions and impl blocks")
                .into_compile_error();
            return quote::quote!(#err #item2).into();
        }
    };
    let args = parse_macro_input!(args with Punctuated::<attr::Arg, Token![,]>::parse_terminated);
    let place = expand::Place { self_ty: None };
    match expand_fn(args.into_iter().collect(), &f, &place) {
        Ok((outer, inner)) => quote::quote!(#outer #inner).into(),
        Err(e) => {
            let err = e.into_compile_error();
            quote::quote!(#err #item2).into()
        }
    }
}

fn expand_fn(
    args: Vec<attr::Arg>,
    f: &ItemFn,
    place: &expand::Place,
) -> syn::Result<(proc_macro2::TokenStream, proc_macro2::TokenStream)> {
    let names: Vec<syn::Ident> = expand::arg_names(f)?.into_iter().map(|(n, _)| n).collect();
    let mut model = check::model(args, &f.sig.ident, &names)?;
    if model.sources.is_empty() {
        model.sources = source::detected(f);
    }
    wgsl::check(f, &model.params)?;
    expand::expand(&model, f, place)
}

/// `#[tunable]` on an impl block: expands each method marked `#[tunable(...)]`.
fn expand_impl(mut imp: ItemImpl) -> syn::Result<TokenStream> {
    let self_ty = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(self_ty) = self_ty else {
        return Err(syn::Error::new_spanned(
            &imp.self_ty,
            "#[tunable] needs an impl block of a named type",
        ));
    };
    let place = expand::Place {
        self_ty: Some(self_ty),
    };
    let mut outer = proc_macro2::TokenStream::new();
    let mut items = Vec::new();
    for item in std::mem::take(&mut imp.items) {
        let ImplItem::Fn(m) = item else {
            items.push(item);
            continue;
        };
        let Some(at) = m.attrs.iter().position(|a| a.path().is_ident("tunable")) else {
            items.push(ImplItem::Fn(m));
            continue;
        };
        let mut m = m;
        let attr = m.attrs.remove(at);
        let args: Vec<attr::Arg> = match &attr.meta {
            syn::Meta::List(l) => l
                .parse_args_with(Punctuated::<attr::Arg, Token![,]>::parse_terminated)?
                .into_iter()
                .collect(),
            _ => vec![],
        };
        let f = ItemFn {
            attrs: m.attrs,
            vis: m.vis,
            modifiers: m.modifiers,
            sig: m.sig,
            block: Box::new(m.block),
        };
        let (o, inner) = expand_fn(args, &f, &place)?;
        outer.extend(o);
        let file: syn::File = syn::parse2(quote::quote!(impl X { #inner }))?;
        if let Some(syn::Item::Impl(generated)) = file.items.into_iter().next() {
            items.extend(generated.items);
        }
    }
    imp.items = items;
    Ok(quote::quote!(#imp #outer).into())
}

#[cfg(test)]
mod tests {
    use tunable_search::defaults;

    /// The lines of the attribute's rustdoc.
    fn reference() -> Vec<&'static str> {
        include_str!("lib.rs")
            .lines()
            .take_while(|l| !l.starts_with("#[proc_macro_attribute]"))
            .filter_map(|l| l.strip_prefix("///"))
            .map(str::trim_start)
            .collect()
    }

    #[test]
    fn the_reference_documents_every_option_with_the_shared_defaults() {
        let doc = reference();
        let row = |option: &str| {
            let start = format!("| `{option}` |");
            *doc.iter()
                .find(|l| l.starts_with(&start))
                .unwrap_or_else(|| panic!("no table row for `{option}`"))
        };
        for option in crate::attr::OPTIONS {
            row(option);
            assert!(
                doc.iter()
                    .any(|l| l.starts_with("## ") && l.contains(&format!("`{option}`"))),
                "no section for `{option}`"
            );
        }
        for (option, default) in [
            ("budget", format!("`{}`", defaults::BUDGET)),
            ("strategy", format!("`\"{}\"`", defaults::STRATEGY)),
            ("seed", format!("`{}`", defaults::SEED)),
            ("repeats", format!("`{}`", defaults::REPEATS)),
            ("warmup", format!("`{}`", defaults::WARMUP)),
            ("tolerance", format!("`{:e}`", defaults::TOLERANCE)),
        ] {
            let row = row(option);
            assert!(
                row.ends_with(&format!("| {default} |")),
                "the reference gives `{option}` a default other than {default}: {row}"
            );
        }
        let limit = format!("at most {}", crate::check::MAX_CONST_INSTANCES);
        assert!(doc.iter().any(|l| l.contains(&limit)), "`consts` limit");
    }
}
