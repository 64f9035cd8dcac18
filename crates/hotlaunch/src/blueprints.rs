//! Heap blueprints shared between the runs of one workload (issue 14: "heap blueprints built
//! once, shared read-only across runs and policies").
//!
//! A generated Java heap is a pure function of its recipe: the heap kind, its size and the seed
//! the recipe draws from (`java_model`). Every policy run on the same resolved scenario and seed
//! asks for the same recipes, so a [`RunSpec`](crate::RunSpec) carries one cache that its clones
//! share: the first run to start an app builds the blueprint (lazily, as before), the others
//! reuse it. `compare` runs eight policies per seed, and building blueprints was about a tenth of
//! a run's CPU. Results cannot change: a blueprint is read-only once built and does not depend on
//! which run built it or when.
//!
//! The cache holds blueprints as long as its spec (or a clone) lives; [`BlueprintCache::clear`]
//! lets a caller that is done with a seed drop them early.

use runtime::LazyBlueprint;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// What determines a generated blueprint: heap kind (`java.heap`), size in bytes, recipe seed.
type Key = (String, u64, u64);

/// Blueprints by recipe, shared by clones (see the module docs).
#[derive(Clone, Default)]
pub struct BlueprintCache(Arc<Mutex<HashMap<Key, LazyBlueprint>>>);

impl BlueprintCache {
    /// The blueprint of recipe (`kind`, `bytes`, `seed`): the cached one, else `make()`'s
    /// (still built only on first use).
    pub fn get_or_insert(
        &self,
        kind: &str,
        bytes: u64,
        seed: u64,
        make: impl FnOnce() -> LazyBlueprint,
    ) -> LazyBlueprint {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.entry((kind.to_string(), bytes, seed))
            .or_insert_with(make)
            .clone()
    }

    /// Drop every cached blueprint (runs holding one keep theirs).
    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Recipes cached.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for BlueprintCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlueprintCache({} recipes)", self.len())
    }
}
