pub mod bench;
pub mod inspect;
pub mod run;
