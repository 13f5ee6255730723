//! # The entry point
//!
//! `<name>(args...)`, with the user's signature and attributes: looks up the configuration to run
//! and runs it. Without the `autotune` feature it picks from the [baked table](super::baked) by
//! device and key (no I/O), and on a device with no entry times the [portable
//! set](super::portable) once; the configuration picked runs as its
//! [instance](super::instances), compiled with it as constants (the default, through
//! `<name>_with`). With the feature, `__private::autotune` tunes a missing (device, key) on this
//! call's arguments through the tuning closure generated here, which runs a variant (after
//! `restore`) and reads the output and answer [`verify`](super::verify) checks; every
//! configuration runs through `<name>_with`. A shipped call whose baked or portable
//! configuration returns `Err` runs the default instead ([`shipped_call`]).

use super::baked::Tuned;
use super::{Kernel, instances, params, verify};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{ReturnType, Type};

/// `<name>(args...)`, with the baked table of `tuned`.
pub(super) fn item(k: &Kernel, tuned: &Tuned) -> TokenStream {
    let (model, f) = (k.model, k.f);
    let (vis, attrs, sig) = (&f.vis, &f.attrs, &f.sig);
    let name = &sig.ident;
    let (impl_g, _, where_c) = sig.generics.split_for_impl();
    let (inputs, output) = (&sig.inputs, &sig.output);
    let call_with = &k.call_with;
    let (track, warn) = (tuned.track(), tuned.warn());
    let shipped_static = shipped_static(k, tuned);
    let shipped = shipped(k, tuned);
    let key = key(k);
    let call_args: Vec<TokenStream> = k.args.iter().map(|(a, _)| quote!(#a)).collect();
    let run_shipped = shipped_call(k, tuned, &call_args);
    let tune = tune(k, &tuned.dropped);
    let restore_after = model
        .restore
        .as_ref()
        .map(|r| quote!(if __tunable_ran { #r; }));
    quote! {
        #(#attrs)*
        #[inline]
        #vis fn #name #impl_g (#inputs) #output #where_c {
            #track
            #warn
            #shipped_static
            let key: u64 = #key;
            #[allow(unused_mut, unused_variables)]
            let mut __tunable_ran = false;
            ::tunable::__private::select!({
                let params = { #tune };
                #restore_after
                #call_with(&params, #(#call_args),*)
            } else {
                let __tunable_variant =
                    ::tunable::__private::unless_failed(&SHIPPED, key, #shipped);
                #restore_after
                #run_shipped
            })
        }
    }
}

/// The shipped branch's run of `__tunable_variant` (its instance). For a function returning
/// `Result`, an `Err` of a configuration other than the default falls back: one line on stderr,
/// the arguments restored (`restore`), and the default run instead, as it will be for this key
/// from now on (`tunable_runtime::tuner::fallback`).
fn shipped_call(k: &Kernel, tuned: &Tuned, call_args: &[TokenStream]) -> TokenStream {
    if !returns_result(k) {
        return instances::dispatch(k, tuned, &quote!(__tunable_variant), call_args);
    }
    let args = reborrowed(k);
    let first = instances::dispatch(k, tuned, &quote!(__tunable_variant), &args);
    let call_with = &k.call_with;
    let restore = k.model.restore.as_ref().map(|r| quote!(#r;));
    quote! {
        match #first {
            ::std::result::Result::Err(e)
                if ::tunable::__private::falls_back(&SHIPPED, &__tunable_variant) =>
            {
                #[allow(unused_imports)]
                use ::tunable::__private::{ViaDebug as _, ViaDisplay as _};
                // `e` ends here: an error that borrows the arguments frees them for the rerun.
                let why = { let e = e; (&::tunable::__private::Reason(&e)).reason() };
                ::tunable::__private::fall_back(&SHIPPED, key, &__tunable_variant, &why);
                #restore
                #call_with(&SHIPPED.default, #(#call_args),*)
            }
            __tunable_result => __tunable_result,
        }
    }
}

/// Whether the function returns a `Result` (by the last segment of its return type's path):
/// its `Err` is a failed configuration.
fn returns_result(k: &Kernel) -> bool {
    matches!(&k.f.sig.output, ReturnType::Type(_, t) if matches!(&**t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Result")))
}

/// The key expression, `0u64` without a `key` option.
pub(super) fn key(k: &Kernel) -> TokenStream {
    k.model
        .key
        .as_ref()
        .map_or_else(|| quote!(0u64), |e| quote!((#e) as u64))
}

/// The `autotune` branch: the kernel's static spec, the report of dropped tuned entries, and the
/// call of `__private::autotune` with the tuning closure, which answers the configuration to run.
fn tune(k: &Kernel, dropped: &[String]) -> TokenStream {
    let model = k.model;
    let (params_ty, call_space) = (&k.params_ty, &k.call_space);
    let verify::Glue {
        read_output,
        read_answer,
        ..
    } = verify::glue(model);
    let device = device(k);
    let (call_with, args) = (&k.call_with, reborrowed(k));
    let run = restored_run(k, quote!(#call_with(p, #(#args),*)));
    let spec = kernel_spec(k);
    // With `device_properties`, the space bound to them, built once per device identity.
    let (bind, space) = match &model.device_properties {
        None => (TokenStream::new(), quote!(#call_space)),
        Some(props) => (
            quote! {
                static BOUND: ::std::sync::Mutex<::std::vec::Vec<(::std::string::String, ::std::sync::Arc<::tunable::__private::Space>)>> =
                    ::std::sync::Mutex::new(::std::vec::Vec::new());
                let __tunable_space = {
                    let id = ::std::convert::AsRef::<str>::as_ref(&__tunable_device);
                    let mut bound = BOUND.lock().unwrap_or_else(|e| e.into_inner());
                    if !bound.iter().any(|(d, _)| d == id) {
                        let space = #call_space
                            .on_device(&(#props))
                            .expect("the space was checked at compile time");
                        bound.push((id.to_owned(), ::std::sync::Arc::new(space)));
                    }
                    ::std::sync::Arc::clone(&bound.iter().find(|(d, _)| d == id).expect("bound").1)
                };
            },
            quote!(&__tunable_space),
        ),
    };
    quote! {
        #spec
        static DROPPED: ::std::sync::Once = ::std::sync::Once::new();
        DROPPED.call_once(|| { #(eprintln!("{}", #dropped);)* });
        let __tunable_device = #device;
        #bind
        ::tunable::__private::autotune(
            &KERNEL,
            #space,
            ::std::convert::AsRef::<str>::as_ref(&__tunable_device),
            key,
            SHIPPED.table,
            SHIPPED.default,
            &mut |__tunable_call: ::tunable::__private::Call<'_, #params_ty>| match __tunable_call {
                ::tunable::__private::Call::Run(p) => #run
                ::tunable::__private::Call::Output => #read_output,
                ::tunable::__private::Call::Answer => #read_answer,
            },
        )
    }
}

/// The shipped branch's choice, a `Variant`: the baked entry of this device, else the fastest of
/// the portable set (each timed once on the call's arguments as its instance, after `restore`),
/// remembered per thread for the last key on this CPU; see `tunable_runtime::tuner::unseen`.
fn shipped(k: &Kernel, tuned: &Tuned) -> TokenStream {
    let (model, params_ty) = (k.model, &k.params_ty);
    let device = device(k);
    let run = restored_run(k, instances::dispatch(k, tuned, &quote!(v), &reborrowed(k)));
    // The last answer is remembered only where the device cannot change between calls.
    let last = if model.device.is_none() {
        quote! {{
            ::std::thread_local! {
                static LAST: ::tunable::__private::Last<#params_ty> =
                    const { ::tunable::__private::Last::new() };
            }
            ::core::option::Option::Some(&LAST)
        }}
    } else {
        quote!(::core::option::Option::None)
    };
    quote! {
        SHIPPED.run(
            key,
            || #device,
            &mut |v: &::tunable::__private::Variant<#params_ty>| #run,
            #last,
        )
    }
}

/// `static SHIPPED: Shipped<Params>`: what a shipped build knows of the kernel (its name, baked
/// table, portable sets and default), for the entry point and `<name>_config`.
pub(super) fn shipped_static(k: &Kernel, tuned: &Tuned) -> TokenStream {
    let (model, params_ty) = (k.model, &k.params_ty);
    let kernel_name = &model.name;
    let default_lit = params::literal(k, &model.default);
    let (baked, portable) = (tuned.table(k), super::portable::table(tuned, k));
    quote! {
        static SHIPPED: ::tunable::__private::Shipped<#params_ty> = ::tunable::__private::Shipped {
            kernel: #kernel_name,
            table: &[#baked],
            portable: &[#portable],
            default: #default_lit,
        };
    }
}

/// `static KERNEL: KernelSpec`, the kernel's static facts for the runtime.
pub(super) fn kernel_spec(k: &Kernel) -> TokenStream {
    let model = k.model;
    let kernel_name = &model.name;
    let (budget, strategy, seed, repeats, warmup) = (
        model.budget,
        &model.strategy,
        model.seed,
        model.repeats,
        model.warmup,
    );
    let verify_mode = verify::glue(model).mode;
    let (metrics, objectives) = (&model.metrics, &model.objectives);
    let prefer = match &model.prefer {
        Some(p) => quote!(::core::option::Option::Some(#p)),
        None => quote!(::core::option::Option::None),
    };
    let body = body_fingerprint(k);
    let device_given = model.device.is_some();
    let sources = model.sources.iter().map(|s| s.hash);
    quote! {
        static KERNEL: ::tunable::__private::KernelSpec = ::tunable::__private::KernelSpec {
            name: #kernel_name,
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
            budget: #budget,
            strategy: #strategy,
            seed: #seed,
            metrics: &[#(#metrics),*],
            objectives: &[#(#objectives),*],
            prefer: #prefer,
            repeats: #repeats,
            warmup: #warmup,
            verify: #verify_mode,
            body: #body,
            device_given: #device_given,
            sources: &[#(#sources),*],
        };
    }
}

/// The fingerprint of the function as written: its signature and body as tokens (so formatting
/// and comments do not change it), which keys the journal (`KernelSpec::body`).
fn body_fingerprint(k: &Kernel) -> u64 {
    let (sig, block) = (&k.f.sig, &k.f.block);
    let sig = quote!(#sig).to_string();
    let block = quote!(#block).to_string();
    tunable_search::fingerprint::fnv1a(&[sig.as_bytes(), block.as_bytes()])
}

/// The device identity: the `device` expression, else this CPU's.
pub(super) fn device(k: &Kernel) -> TokenStream {
    k.model.device.as_ref().map_or_else(
        || quote!(::tunable::__private::cpu_device()),
        |d| quote!(#d),
    )
}

/// `{ restore; run }`: what tuning and the timing of the portable set run per configuration, `run`
/// being the call of one variant (`restore` also marks the arguments for restoring before the
/// caller's run).
fn restored_run(k: &Kernel, run: TokenStream) -> TokenStream {
    let restore = k
        .model
        .restore
        .as_ref()
        .map(|r| quote!(__tunable_ran = true; #r;));
    let check = run_variant(k, run);
    quote!({ #restore #check })
}

/// The call's arguments as a closure passes them to a variant, reborrowing `&mut` ones.
fn reborrowed(k: &Kernel) -> Vec<TokenStream> {
    k.args
        .iter()
        .map(|(a, re)| if *re { quote!(&mut *#a) } else { quote!(#a) })
        .collect()
}

/// Runs `run`, the call of one variant, and answers `Ok(None)`; for a function returning
/// `Result`, an `Err(e)` is a failed configuration whose reason is `e`'s `Display` (else its
/// `Debug`).
fn run_variant(k: &Kernel, run: TokenStream) -> TokenStream {
    if returns_result(k) {
        quote!(match #run {
            ::std::result::Result::Ok(_) => ::std::result::Result::Ok(::std::option::Option::None),
            ::std::result::Result::Err(e) => {
                #[allow(unused_imports)]
                use ::tunable::__private::{ViaDebug as _, ViaDisplay as _};
                ::std::result::Result::Err((&::tunable::__private::Reason(&e)).reason())
            }
        })
    } else {
        quote!({ let _ = #run; ::std::result::Result::Ok(::std::option::Option::None) })
    }
}
