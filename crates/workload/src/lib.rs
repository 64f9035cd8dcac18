//! Workloads for hotlaunch.

pub mod builtin_scenarios;
pub mod policy_tables;
pub mod scenario;
pub mod user;
