//! # The space function
//!
//! `<name>_space()`: the kernel's search space, built once on first use with the run-time
//! engine from the same parameters and constraints the macro checked at compile time.

use super::{Kernel, tokens};
use proc_macro2::TokenStream;
use quote::quote;

/// `<name>_space() -> &'static Arc<Space>`.
pub(super) fn item(k: &Kernel) -> TokenStream {
    let (vis, space_fn, kernel_name) = (&k.f.vis, &k.space_fn, &k.model.name);
    let names = k.model.params.iter().map(|p| p.name.to_string());
    let value_lists = k.model.params.iter().map(|p| {
        let values = p.values.iter().map(tokens::value);
        quote!(#(#values),*)
    });
    let constraints = k.model.constraints.iter().map(syn::LitStr::value);
    let doc = format!(
        "The search space of [`{}`]: its parameters and constraints.",
        k.f.sig.ident
    );
    quote! {
        #[doc = #doc]
        #vis fn #space_fn() -> &'static ::std::sync::Arc<::tunable::__private::Space> {
            static SPACE: ::std::sync::LazyLock<::std::sync::Arc<::tunable::__private::Space>> = ::std::sync::LazyLock::new(|| {
                let b = ::tunable::__private::SpaceBuilder::new().name(#kernel_name)
                    #(.param(#names, ::std::vec![#value_lists]))*
                    #(.constraint(#constraints))*;
                ::std::sync::Arc::new(b.build().expect("the space was checked at compile time"))
            });
            &SPACE
        }
    }
}
