//! Workloads for hotlaunch.

pub mod pagelevel;
