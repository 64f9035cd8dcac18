//! `hotlaunch-fuzz`: a fuzz harness for every parser of files hotlaunch reads (issue 13), on
//! stable Rust (no libFuzzer).
//!
//! - [`mutate`]: the hand-written mutation engine (seeded, deterministic, no coverage feedback).
//! - [`seeds`]: seed inputs per target (the repo's real TOMLs; dumps, corpora and traces built in
//!   code).
//! - [`targets`]: one target per parser, run through the public function the CLI uses.
//! - [`supervise`]: runs inputs in a worker child process under a 2 GB address-space limit
//!   (`setrlimit(RLIMIT_AS)`) with panics caught per input; the parent kills a worker stuck past
//!   the hang limit and records an abort (OOM, stack overflow) or hang with the input that caused
//!   it, saved under the crash directory, then resumes after it.
//!
//! Simplifications: an input slower than the time cap but finishing is reported as a hang
//! without interrupting it (only the hard limit kills); throughput is that of one core.

pub mod mutate;
pub mod seeds;
pub mod supervise;
pub mod targets;

pub use targets::{Target, ALL};
