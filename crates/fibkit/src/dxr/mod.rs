//! DXR.
use crate::engine::{BuildError, BuildOptions, Fib4};
use crate::rib::Rib4;
/// Registry builder.
pub fn build_boxed<const K: u32>(_rib: &Rib4, _options: &BuildOptions) -> Result<Box<dyn Fib4>, BuildError> {
    unimplemented!()
}
