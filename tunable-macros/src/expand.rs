//! What `#[tunable]` emits: the parameter struct, the space, `<name>_with`, the tuned `<name>`,
//! and the baked table of tuned configurations read from `tuned/<kernel>.bin` at compile time.

use crate::attr::ParamLit;
use crate::check::{Model, ParamTy};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type};
use tunable_runtime::store::{TunedEntry, read, tuned_dir, tuned_file};

/// A baked entry: device, key and the value index of each parameter.
pub(crate) struct BakedEntry {
    device: String,
    key: u64,
    indices: Vec<usize>,
}

/// Reads the tuned file; returns the usable entries, the reasons others were dropped, the file
/// (for rebuild tracking) and a warning for an unreadable file.
pub(crate) fn read_baked(
    model: &Model,
) -> (Vec<BakedEntry>, Vec<String>, Option<String>, Option<String>) {
    let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") else {
        return (vec![], vec![], None, None);
    };
    let path = tuned_file(&tuned_dir(&manifest), &model.name);
    let tracked = path.exists().then(|| path.to_string_lossy().into_owned());
    let entries = match read(&path) {
        Ok(e) => e,
        Err(e) => {
            return (
                vec![],
                vec![],
                tracked,
                Some(format!("{e}; building with default configurations")),
            );
        }
    };
    let (mut keep, mut dropped) = (Vec::new(), Vec::new());
    for e in entries.into_iter().filter(|e| e.kernel == model.name) {
        match indices_of(model, &e) {
            Some(indices) => keep.push(BakedEntry { device: e.device, key: e.key, indices }),
            None => dropped.push(format!(
                "tunable: dropped the tuned configuration of {} for device {:?}, key {}: it no longer fits the annotation (parameters, values or constraints changed)",
                e.kernel, e.device, e.key
            )),
        }
    }
    (keep, dropped, tracked, None)
}

fn indices_of(model: &Model, e: &TunedEntry) -> Option<Vec<usize>> {
    if e.space_hash != model.space.fingerprint() || e.params.len() != model.params.len() {
        return None;
    }
    let values = e.values();
    let idx: Vec<u16> = model.space.indices_of(&values)?;
    model
        .space
        .contains(&idx)
        .then(|| idx.into_iter().map(usize::from).collect())
}

fn lit_tokens(v: &ParamLit) -> TokenStream {
    match v {
        ParamLit::Int(i, _, _) => {
            let l = Literal::i64_unsuffixed(i.abs());
            if *i < 0 { quote!(-#l) } else { quote!(#l) }
        }
        ParamLit::Float(f, _) => {
            let l = Literal::f64_unsuffixed(f.abs());
            if *f < 0.0 { quote!(-#l) } else { quote!(#l) }
        }
        ParamLit::Bool(b, _) => quote!(#b),
        ParamLit::Str(s, _) => {
            let l = Literal::string(s);
            quote!(#l)
        }
    }
}

fn value_tokens(v: &ParamLit) -> TokenStream {
    match v {
        ParamLit::Int(i, _, _) => quote!(::tunable::__private::Value::Int(#i)),
        ParamLit::Float(f, _) => quote!(::tunable::__private::Value::Float(#f)),
        ParamLit::Bool(b, _) => quote!(::tunable::__private::Value::Bool(#b)),
        ParamLit::Str(s, _) => {
            quote!(::tunable::__private::Value::Str(::std::string::String::from(#s)))
        }
    }
}

fn ty_tokens(t: &ParamTy) -> TokenStream {
    match t {
        ParamTy::Int(s) => {
            let i = Ident::new(s, Span::call_site());
            quote!(#i)
        }
        ParamTy::Float => quote!(f64),
        ParamTy::Bool => quote!(bool),
        ParamTy::Str => quote!(&'static str),
    }
}

fn pascal(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| p[..1].to_uppercase() + &p[1..])
        .collect()
}

/// The function's argument names, and how to pass each again inside the tuning closure.
/// The function's argument names (without the receiver), and whether each is a `&mut` that the
/// tuning closure must reborrow.
pub(crate) fn arg_names(f: &ItemFn) -> syn::Result<Vec<(Ident, bool)>> {
    let mut out = Vec::new();
    for a in &f.sig.inputs {
        if let FnArg::Typed(pt) = a {
            let Pat::Ident(pi) = &*pt.pat else {
                return Err(syn::Error::new_spanned(
                    &pt.pat,
                    "#[tunable] needs plain argument names (no patterns)",
                ));
            };
            let reborrow = matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_some());
            out.push((pi.ident.clone(), reborrow));
        }
    }
    Ok(out)
}

/// Where the function lives: free, or a method of `impl Self`.
pub(crate) struct Place {
    /// The `Self` type's name, for methods.
    pub self_ty: Option<Ident>,
}

/// The items for one kernel: `(outer, inner)`; for a free function both go to the module, for a
/// method `inner` goes into the impl block and `outer` (the parameter struct) beside it.
pub(crate) fn expand(
    model: &Model,
    f: &ItemFn,
    place: &Place,
) -> syn::Result<(TokenStream, TokenStream)> {
    let args = arg_names(f)?;
    let receiver = f.sig.inputs.iter().find_map(|a| {
        if let FnArg::Receiver(r) = a {
            Some(r)
        } else {
            None
        }
    });
    if receiver.is_some() && place.self_ty.is_none() {
        return Err(syn::Error::new_spanned(
            receiver,
            "for a method, put `#[tunable]` (without arguments) on the impl block too",
        ));
    }
    let typed: Vec<&FnArg> = f
        .sig
        .inputs
        .iter()
        .filter(|a| matches!(a, FnArg::Typed(_)))
        .collect();
    let vis = &f.vis;
    let attrs = &f.attrs;
    let sig = &f.sig;
    let name = &sig.ident;
    let body = &f.block;
    let (impl_g, _, where_c) = sig.generics.split_for_impl();
    let inputs = &sig.inputs;
    let output = &sig.output;
    let prefix = place
        .self_ty
        .as_ref()
        .map_or_else(String::new, |t| pascal(&t.to_string()));
    let params_ty = format_ident!("{}{}Params", prefix, pascal(&name.to_string()));
    let with_fn = format_ident!("{}_with", name);
    let space_fn = format_ident!("{}_space", name);
    let (call_with, call_space) = match (receiver.is_some(), place.self_ty.is_some()) {
        (true, _) => (quote!(self.#with_fn), quote!(Self::#space_fn())),
        (false, true) => (quote!(Self::#with_fn), quote!(Self::#space_fn())),
        (false, false) => (quote!(#with_fn), quote!(#space_fn())),
    };
    let with_inputs = match receiver {
        Some(r) => quote!(#r, params: &#params_ty, #(#typed),*),
        None => quote!(params: &#params_ty, #(#typed),*),
    };
    let kernel_name = &model.name;
    let fields: Vec<&Ident> = model.params.iter().map(|p| &p.name).collect();
    let tys: Vec<TokenStream> = model.params.iter().map(|p| ty_tokens(&p.ty)).collect();
    let param_names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    let n_params = param_names.len();
    let value_lists: Vec<Vec<TokenStream>> = model
        .params
        .iter()
        .map(|p| p.values.iter().map(value_tokens).collect())
        .collect();
    let constraints: Vec<String> = model.constraints.iter().map(syn::LitStr::value).collect();
    let struct_lit = |idx: &[usize]| {
        let vals = model
            .params
            .iter()
            .zip(idx)
            .map(|(p, &i)| lit_tokens(&p.values[i]));
        quote!(#params_ty { #(#fields: #vals),* })
    };
    let default_lit = struct_lit(&model.default);
    // from_values: one conversion per field.
    let conversions = model.params.iter().enumerate().map(|(i, p)| {
        let ty = ty_tokens(&p.ty);
        match &p.ty {
            ParamTy::Int(_) => quote!(match &v[#i] { ::tunable::__private::Value::Int(x) => <#ty>::try_from(*x).ok()?, _ => return None }),
            ParamTy::Float => quote!(match &v[#i] {
                ::tunable::__private::Value::Float(x) => *x,
                ::tunable::__private::Value::Int(x) => *x as f64,
                _ => return None,
            }),
            ParamTy::Bool => quote!(match &v[#i] { ::tunable::__private::Value::Bool(x) => *x, _ => return None }),
            ParamTy::Str => {
                let lits: Vec<TokenStream> = p.values.iter().map(lit_tokens).collect();
                quote!(match &v[#i] {
                    ::tunable::__private::Value::Str(x) => match x.as_str() { #(#lits => #lits,)* _ => return None },
                    _ => return None,
                })
            }
        }
    });
    let to_values = model.params.iter().map(|p| {
        let f = &p.name;
        match &p.ty {
            ParamTy::Int(_) => quote!(::tunable::__private::Value::Int(self.#f as i64)),
            ParamTy::Float => quote!(::tunable::__private::Value::Float(self.#f)),
            ParamTy::Bool => quote!(::tunable::__private::Value::Bool(self.#f)),
            ParamTy::Str => {
                quote!(::tunable::__private::Value::Str(::std::string::String::from(self.#f)))
            }
        }
    });
    // The body, with the parameters as locals, or instantiated per configuration with consts.
    let with_body = if model.consts {
        let index_exprs = model.params.iter().map(|p| {
            let f = &p.name;
            let arms = p.values.iter().enumerate().map(|(i, v)| {
                let l = lit_tokens(v);
                let i = i as u16;
                quote!(if params.#f == #l { #i } else)
            });
            quote!(#(#arms)* { u16::MAX })
        });
        let arms = (0..model.space.len()).map(|pos| {
            let idx = model.space.indices(pos);
            let consts = model.params.iter().zip(&idx).map(|(p, &i)| {
                let (f, ty, l) = (&p.name, ty_tokens(&p.ty), lit_tokens(&p.values[i as usize]));
                quote!(#[allow(non_upper_case_globals)] const #f: #ty = #l;)
            });
            quote!((#(#idx),*) => { #(#consts)* #body })
        });
        quote! {
            match (#(#index_exprs),*) {
                #(#arms)*
                _ => panic!("{:?} is not a valid configuration of {}", params, #kernel_name),
            }
        }
    } else {
        // Parameters of GPU kernels often reach only the kernel source (as `-D` definitions,
        // through `params`), not the host code: unused ones are not warned about.
        quote! {
            #[allow(unused_variables)]
            let #params_ty { #(#fields),* } = *params;
            #body
        }
    };
    let (baked, dropped, tracked, warning) = read_baked(model);
    let baked_lits = baked.iter().map(|b| {
        let (d, k, s) = (&b.device, b.key, struct_lit(&b.indices));
        quote!(::tunable::__private::Baked { device: #d, key: #k, params: #s })
    });
    let track = tracked.map(|p| {
        quote!(
            const _: &[u8] = include_bytes!(#p);
        )
    });
    let warn = warning.map(|w| {
        quote! {
            #[deprecated(note = #w)]
            #[allow(non_camel_case_types)]
            struct __tunable_warning;
            #[allow(dead_code)]
            fn __tunable_warn() { let _ = __tunable_warning; }
        }
    });
    let key = model
        .key
        .as_ref()
        .map_or_else(|| quote!(0u64), |k| quote!((#k) as u64));
    let call_args = args.iter().map(|(a, _)| quote!(#a));
    let closure_args = args
        .iter()
        .map(|(a, re)| if *re { quote!(&mut *#a) } else { quote!(#a) });
    let returns_result = matches!(output, ReturnType::Type(_, t) if matches!(&**t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Result")));
    // An `Err(e)` is a failed configuration whose reason is `e`'s Display (else its Debug).
    let check = if returns_result {
        quote!(match #call_with(p, #(#closure_args),*) {
            ::std::result::Result::Ok(_) => ::std::result::Result::Ok(::std::option::Option::None),
            ::std::result::Result::Err(e) => {
                #[allow(unused_imports)]
                use ::tunable::__private::{ViaDebug as _, ViaDisplay as _};
                ::std::result::Result::Err((&::tunable::__private::Reason(&e)).reason())
            }
        })
    } else {
        quote!({ let _ = #call_with(p, #(#closure_args),*); ::std::result::Result::Ok(::std::option::Option::None) })
    };
    let none = quote!(::std::result::Result::Ok(::std::option::Option::None));
    let (read_output, read_answer, verify_mode) = match &model.verify {
        None => (
            none.clone(),
            none,
            quote!(::tunable::__private::Verify::Off),
        ),
        Some(v) => {
            let out = &v.output;
            let t = v.tolerance;
            let read_output =
                quote!(::tunable::__private::snapshot(&(#out)).map(::std::option::Option::Some));
            match &v.answer {
                Some(a) => (
                    read_output,
                    quote!(::tunable::__private::snapshot(&(#a)).map(::std::option::Option::Some)),
                    quote!(::tunable::__private::Verify::Answer { tolerance: #t }),
                ),
                None => (
                    read_output,
                    none,
                    quote!(::tunable::__private::Verify::Reference { tolerance: #t }),
                ),
            }
        }
    };
    let device = model.device.as_ref().map_or_else(
        || quote!(::tunable::__private::cpu_device()),
        |d| quote!(#d),
    );
    let restore = model
        .restore
        .as_ref()
        .map(|r| quote!(__tunable_ran = true; #r;));
    let restore_after = model
        .restore
        .as_ref()
        .map(|r| quote!(if __tunable_ran { #r; }));
    let (budget, strategy, repeats, warmup) =
        (model.budget, &model.strategy, model.repeats, model.warmup);
    let doc_params = format!("Tunable parameters of [`{name}`], generated by `#[tunable]`.");
    let doc_with =
        format!("Runs [`{name}`] with the given parameters (one variant), without tuning.");
    let doc_space = format!("The search space of [`{name}`]: its parameters and constraints.");
    let outer = quote! {
        #[doc = #doc_params]
        #[derive(Clone, Copy, Debug, PartialEq, ::tunable::__private::serde::Serialize, ::tunable::__private::serde::Deserialize)]
        #[serde(crate = "::tunable::__private::serde")]
        #[allow(non_snake_case)]
        #vis struct #params_ty {
            #(#[allow(missing_docs)] pub #fields: #tys,)*
        }

        impl ::std::default::Default for #params_ty {
            /// The kernel's default configuration (the `default` option, else the first valid
            /// configuration): what runs when nothing is tuned.
            fn default() -> Self {
                #default_lit
            }
        }

        impl #params_ty {
            /// The parameter values in declared order.
            #vis fn values(&self) -> ::std::vec::Vec<::tunable::__private::Value> {
                ::std::vec![#(#to_values),*]
            }
        }

        impl ::tunable::__private::Params for #params_ty {
            const NAMES: &'static [&'static str] = &[#(#param_names),*];
            fn from_values(v: &[::tunable::__private::Value]) -> ::std::option::Option<Self> {
                if v.len() != #n_params { return None; }
                Some(Self { #(#fields: #conversions),* })
            }
            fn to_values(&self) -> ::std::vec::Vec<::tunable::__private::Value> {
                self.values()
            }
        }
    };
    let inner = quote! {
        #[doc = #doc_space]
        #vis fn #space_fn() -> &'static ::std::sync::Arc<::tunable::__private::Space> {
            static SPACE: ::std::sync::LazyLock<::std::sync::Arc<::tunable::__private::Space>> = ::std::sync::LazyLock::new(|| {
                let b = ::tunable::__private::SpaceBuilder::new().name(#kernel_name)
                    #(.param(#param_names, ::std::vec![#(#value_lists),*]))*
                    #(.constraint(#constraints))*;
                ::std::sync::Arc::new(b.build().expect("the space was checked at compile time"))
            });
            &SPACE
        }

        #[doc = #doc_with]
        #[inline]
        #[allow(non_snake_case)]
        #vis fn #with_fn #impl_g (#with_inputs) #output #where_c {
            #with_body
        }

        #(#attrs)*
        #[inline]
        #vis fn #name #impl_g (#inputs) #output #where_c {
            #track
            #warn
            const DEFAULT: #params_ty = #default_lit;
            static BAKED: &[::tunable::__private::Baked<#params_ty>] = &[#(#baked_lits),*];
            let key: u64 = #key;
            #[allow(unused_mut, unused_variables)]
            let mut __tunable_ran = false;
            let params = if ::tunable::__private::AUTOTUNE {
                static KERNEL: ::tunable::__private::KernelSpec = ::tunable::__private::KernelSpec {
                    name: #kernel_name,
                    manifest_dir: env!("CARGO_MANIFEST_DIR"),
                    budget: #budget,
                    strategy: #strategy,
                    repeats: #repeats,
                    warmup: #warmup,
                    verify: #verify_mode,
                };
                static DROPPED: ::std::sync::Once = ::std::sync::Once::new();
                DROPPED.call_once(|| { #(eprintln!("{}", #dropped);)* });
                let __tunable_device = #device;
                ::tunable::__private::autotune(
                    &KERNEL,
                    #call_space,
                    ::std::convert::AsRef::<str>::as_ref(&__tunable_device),
                    key,
                    BAKED,
                    DEFAULT,
                    &mut |__tunable_call: ::tunable::__private::Call<'_, #params_ty>| match __tunable_call {
                        ::tunable::__private::Call::Run(p) => { #restore #check }
                        ::tunable::__private::Call::Output => #read_output,
                        ::tunable::__private::Call::Answer => #read_answer,
                    },
                )
            } else {
                ::tunable::__private::baked(BAKED, key, DEFAULT, || #device)
            };
            #restore_after
            #call_with(&params, #(#call_args),*)
        }
    };
    Ok((outer, inner))
}
