//! Workloads for hotlaunch.

pub mod policy_tables;
pub mod scenario;
pub mod user;
