//! Device profiles.
