//! Run-time dispatch to AVX2 builds of the hot loops.
//!
//! [`avx2_dispatch!`] defines a function that calls its portable body
//! (`#[inline(always)]`, written once) either as compiled for the target's
//! baseline or, when the CPU has AVX2, as compiled with AVX2 enabled. Both
//! builds run the same floating-point operations in the same order (Rust
//! never fuses a multiplication and an addition), so they give the same
//! bits; only the vector width differs. The one `unsafe` of the dispatch
//! is here, with its argument.

/// Defines `$vis fn $name[<generics>]($args) -> $ret` that runs
/// `$portable($args)` built for AVX2 when the CPU has it, else the
/// portable build. Generic functions give their parameters twice: as
/// declared (`[D: DotProduct]`) and as passed (`[D]`).
macro_rules! avx2_dispatch {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $([$($generics:tt)*] [$($passed:tt)*])?
            ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $portable:ident
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$($generics)*>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[target_feature(enable = "avx2")]
                fn avx2 $(<$($generics)*>)? ($($arg: $ty),*) $(-> $ret)? {
                    $portable $(::<$($passed)*>)? ($($arg),*)
                }
                // SAFETY: the CPU has AVX2 (checked just above), the one
                // condition for calling a function built with it enabled.
                return unsafe { avx2 $(::<$($passed)*>)? ($($arg),*) };
            }
            $portable $(::<$($passed)*>)? ($($arg),*)
        }
    };
}

pub(crate) use avx2_dispatch;
