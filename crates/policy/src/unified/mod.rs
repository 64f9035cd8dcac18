//! `unified`: the compatible mechanisms of the five techniques on one stack, assembled with
//! [`Composed`] from the technique modules themselves (no mechanism code is copied here: this
//! module only says which part supplies which seam).
//!
//! | part | seams taken | what it contributes |
//! |---|---|---|
//! | [`ariadne`] (HPCA'25), **off by default** (`ariadne.enabled = true`) | swap devices, reclaim, fault, framework | hot/warm/cold lists (HotnessOrg), chunk size by hotness (AdaptiveComp), pre-decompression (PreDecomp) |
//! | [`fleet`] (ASPLOS'24) | runtime, framework; reclaim and swap devices as fallbacks (taken while Ariadne is off) | grouping GC and background-object GC (no GC faults a background heap back in), COLD_RUNTIME page-out of cold regions, HOT_RUNTIME launch regions kept until last-resort reclaim |
//! | [`memsaver`] (ICPE'24) | framework; swap devices as a fallback | per-context hot-launch set H + transition working set B1 kept, the rest of a background app (native, file and Java pages) paged out at the end of its transition |
//! | [`regions`] (ISMM'15) | placement, framework; swap devices as a fallback | region domains and special domains for physical memory (I/O buffers from whole regions) |
//!
//! **Conflicts and how they are resolved**
//! - *Swap devices*: every technique builds stock zram except Ariadne, whose zram has the
//!   hotness-aware chunk planner; Ariadne's are taken, the others' are fallbacks used only in the
//!   ablation without Ariadne.
//! - *Reclaim*: Fleet (a launch page marked HOT_RUNTIME is activated until last-resort priority)
//!   and Ariadne (cold pages of all apps first, then warm, then hot) both decide reclaim. Ariadne's
//!   hot list holds the pages of each app's last launch, i.e. the pages Fleet's HOT hint
//!   protects, and its order also spares warm pages, so when Ariadne is on its hook is taken and
//!   Fleet's is the fallback. Fleet's HOT pages are still moved to the active list by its
//!   framework part.
//! - *Managed runtime*: Marvin and Fleet both own the collector. Marvin is not a part: its design
//!   also needs the reclaim, fault and shrinker seams (no kernel anon swap; object-granular swap
//!   through a shrinker), which excludes Ariadne's compressed-swap design as a whole, and its stub
//!   and bookmark machinery costs several times Android's CPU (issue 16's measurement). Fleet's
//!   background-object GC solves the same GC–swap conflict inside the page-swap design. The
//!   comparison runs `marvin` beside `unified`.
//! - *Framework*: the four parts' lifecycle hooks all run, in the order above (launch-start stalls
//!   add up). MemSaver's page-out at the transition end and Fleet's COLD_RUNTIME page-out both
//!   page out what the app will not need; MemSaver keeps H ∪ B1, which covers Fleet's launch
//!   regions.
//!
//! **Why Ariadne is off by default** (measured, see the table): on top of MemSaver's page-out,
//! Ariadne's part lowered the mean number of cached apps (8.90 → 7.86) and raised the median hot
//! launch (256 → 271 ms) in every configuration tried (HotnessOrg on or off, with or without
//! PreDecomp, EHL or AL). MemSaver already pages the cold part of a background app out at its
//! transition end, so HotnessOrg's cold-first order finds little left to order, while its 16 KiB
//! cold chunks make every later fault on a cold page decompress four pages (3× the pages swapped
//! in). The part stays in the composition, switchable, so the comparison can re-measure it on
//! each scenario.
//!
//! Ablation (80-launch day of the default scenario, Pixel 3, seed 1, one run each, stock model
//! before the issue-12 recalibration; `hotlaunch run` on the scenario with these variants):
//!
//! | configuration | hot p50 ms | hot p90 ms | cached mean | mm CPU s | pages swapped in |
//! |---|---|---|---|---|---|
//! | android | 155 | 642 | 8.41 | 28.1 | 297 k |
//! | fleet | 159 | 618 | 8.41 | 30.0 | 378 k |
//! | ariadne | 214 | 582 | 7.85 | 23.5 | 63 k |
//! | memsaver | 253 | 505 | 8.95 | 36.1 | 634 k |
//! | regions | 155 | 643 | 8.41 | 28.3 | 297 k |
//! | marvin | 547 | 1453 | 8.11 | 94.6 | 669 k |
//! | all four parts | 271 | 580 | 7.86 | 47.6 | 911 k |
//! | − ariadne (**default**) | 256 | 504 | 8.90 | 44.5 | 887 k |
//! | − fleet | 262 | 569 | 7.86 | 38.5 | 620 k |
//! | − memsaver | 185 | 589 | 7.85 | 29.7 | 162 k |
//! | − regions | 271 | 581 | 7.86 | 44.1 | 914 k |
//! | all, ariadne without HotnessOrg | 260 | 534 | 8.32 | 50.1 | 1033 k |
//! | all, ariadne AdaptiveComp only | 272 | 492 | 8.01 | 49.6 | 999 k |
//!
//! One seed cannot separate the default from MemSaver alone (p90 504 vs 505 ms, 8.90 vs 8.95
//! apps): `hotlaunch compare` with several seeds gives the intervals.
//!
//! **Ablations**: every part is optional (`[policy.unified] fleet.enabled = false`, or
//! `--param unified.fleet.enabled=false`); all part parameters are available as
//! `<part>.<key>`. `hotlaunch compare SCENARIO --ablation` adds a row per switch (each part on by
//! default turned off, each part off by default turned on) and shows them in the dashboard's
//! ablation table with paired differences from `unified` over the seeds.

use crate::compose::{Composed, Part, Seams};
use crate::{ariadne, fleet, memsaver, regions, FromDefault};

/// The `unified` policy (see the module doc).
pub fn unified() -> Composed {
    Composed {
        name: "unified",
        description: "Fleet's background-object GC + MemSaver's context-aware page-out + ISMM'15 regions (+ Ariadne's hotness-aware zram, off by default), composed",
        parts: vec![
            Part::all(Box::new(ariadne::Ariadne::default())).off_by_default(),
            Part::taking(
                Box::new(FromDefault::<fleet::Fleet>::new()),
                Seams::RUNTIME | Seams::FRAMEWORK,
            )
            .or_else(Seams::RECLAIM | Seams::SWAP_BACKENDS)
            .optional(),
            Part::taking(Box::new(memsaver::MemSaver::default()), Seams::FRAMEWORK)
                .or_else(Seams::SWAP_BACKENDS)
                .optional(),
            Part::taking(Box::new(regions::Regions), Seams::PLACEMENT | Seams::FRAMEWORK)
                .or_else(Seams::SWAP_BACKENDS)
                .optional(),
        ],
    }
}
