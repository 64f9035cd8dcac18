//! Workloads for hotlaunch.

pub mod scenario;
pub mod user;
