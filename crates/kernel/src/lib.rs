//! Linux memory-management model for hotlaunch (see module docs).
pub mod types;
pub mod buddy;
