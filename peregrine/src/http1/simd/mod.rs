//! Header-line scanning kernels. PLACEHOLDER.
