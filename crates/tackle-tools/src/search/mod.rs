//! The search tools on ripgrep's crates: [`glob`] (files by name) and [`grep`] (files by
//! content), sharing one directory walk with ripgrep's default filters ([`walk`]), whose
//! ignore files Tackle reads itself ([`ignore_files`]), and the bounds on their patterns
//! ([`bounds`]).

pub mod bounds;
pub mod glob;
pub mod grep;
pub mod ignore_files;
pub mod pool;
pub mod walk;
