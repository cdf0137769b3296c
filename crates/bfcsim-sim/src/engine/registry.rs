//! The engine's side of the scheme registry (`bfcsim-registry`): the code it runs over the running scheme's own
//! state, its concrete type ([`OnScheme`]), so that the event loop and the end-of-run checks are compiled for
//! each scheme and call its hooks directly (and those of a scheme without them vanish).

use bfcsim_registry::{OnScheme, OnSchemeRef};
use bfcsim_schemes::fabric::Describe;

pub use bfcsim_registry::{AnyScheme, FlowControl, SchemeEntry};

use super::*;

/// The engine's calls on the running scheme, each through [`AnyScheme::with_mut`] or [`AnyScheme::with`].
pub(crate) trait RunScheme {
    /// Processes every event of `fab` due up to and including `end`.
    fn run_window(&mut self, fab: &mut Fabric, end: Time);
    /// Packets and bytes `fab` holds, the scheme's own included.
    fn census(&self, fab: &Fabric) -> (u64, u64);
    /// `fab`'s end-of-run violations, the scheme's included.
    fn local_violations(&self, fab: &Fabric) -> Vec<String>;
}

impl RunScheme for AnyScheme {
    fn run_window(&mut self, fab: &mut Fabric, end: Time) {
        struct Window<'f>(&'f mut Fabric, Time);
        impl OnScheme for Window<'_> {
            type Out = ();
            fn run<S: Describe>(self, s: &mut S) {
                self.0.run_window(s, self.1)
            }
        }
        self.with_mut(Window(fab, end))
    }

    fn census(&self, fab: &Fabric) -> (u64, u64) {
        struct Census<'f>(&'f Fabric);
        impl<'a> OnSchemeRef<'a> for Census<'_> {
            type Out = (u64, u64);
            fn run<S: Describe>(self, s: &'a S) -> (u64, u64) {
                self.0.census(s)
            }
        }
        self.with(Census(fab))
    }

    fn local_violations(&self, fab: &Fabric) -> Vec<String> {
        struct Local<'f>(&'f Fabric);
        impl<'a> OnSchemeRef<'a> for Local<'_> {
            type Out = Vec<String>;
            fn run<S: Describe>(self, s: &'a S) -> Vec<String> {
                self.0.local_violations(s)
            }
        }
        self.with(Local(fab))
    }
}
