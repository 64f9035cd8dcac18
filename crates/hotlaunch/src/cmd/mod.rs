pub mod bench;
pub mod run;
