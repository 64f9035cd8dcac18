//! A heap blueprint built on first use (issue 13). A scenario may declare up to 1,000 apps and
//! launch only a few; building every declared app's long-lived heap up front cost ~23 MB and a
//! fraction of a second each (a 1,000-app declaration aborted for lack of memory). The recipe is
//! kept instead, and the blueprint is built once, when the app's first process starts, then
//! shared by every later incarnation. Building is deterministic (the recipe holds its own seed),
//! so when it happens does not change results.

use crate::blueprint::Blueprint;
use std::fmt;
use std::sync::{Arc, OnceLock};

type Make = Box<dyn Fn() -> Blueprint + Send + Sync>;

/// A blueprint, ready or built on the first [`LazyBlueprint::get`]. Clones share it.
#[derive(Clone)]
pub struct LazyBlueprint(Arc<(OnceLock<Arc<Blueprint>>, Option<Make>)>);

impl LazyBlueprint {
    /// A blueprint built by `make` on first use.
    pub fn new(make: impl Fn() -> Blueprint + Send + Sync + 'static) -> Self {
        Self(Arc::new((OnceLock::new(), Some(Box::new(make)))))
    }

    /// The blueprint, built now if it was not yet.
    pub fn get(&self) -> &Arc<Blueprint> {
        let (cell, make) = &*self.0;
        cell.get_or_init(|| Arc::new(make.as_ref().map(|m| m()).unwrap_or_default()))
    }

    /// Whether the blueprint has been built.
    pub fn is_built(&self) -> bool {
        self.0 .0.get().is_some()
    }
}

impl From<Arc<Blueprint>> for LazyBlueprint {
    fn from(bp: Arc<Blueprint>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(bp);
        Self(Arc::new((cell, None)))
    }
}

impl From<Blueprint> for LazyBlueprint {
    fn from(bp: Blueprint) -> Self {
        Arc::new(bp).into()
    }
}

impl fmt::Debug for LazyBlueprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 .0.get() {
            Some(bp) => write!(f, "LazyBlueprint({} objects)", bp.len()),
            None => f.write_str("LazyBlueprint(not built)"),
        }
    }
}
