//! Response head encoder. PLACEHOLDER.
