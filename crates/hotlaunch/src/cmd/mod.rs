pub mod bench;
pub mod calibrate;
pub mod capture;
pub mod compress_study;
pub mod inspect;
pub mod reproduce;
pub mod run;
pub mod zram_check;
