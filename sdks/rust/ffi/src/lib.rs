//! C ABI (filled in stage 3).
