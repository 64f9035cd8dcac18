//! `unified`: the compatible mechanisms of the five techniques on one stack, assembled with
//! [`Composed`] from the technique modules themselves (no mechanism code is copied here: this
//! module only says which part supplies which seam).
//!
//! | part | seams taken | what it contributes |
//! |---|---|---|
//! | [`ariadne`] (HPCA'25) | swap devices, reclaim, fault, framework | hot/warm/cold lists (HotnessOrg), chunk size by hotness (AdaptiveComp), pre-decompression (PreDecomp) |
//! | [`fleet`] (ASPLOS'24) | runtime, framework; reclaim and swap devices only as fallbacks | grouping GC and background-object GC (no GC faults a background heap back in), COLD_RUNTIME page-out of cold regions, HOT_RUNTIME launch regions |
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
//!   protects, and its order also spares warm pages, so Ariadne's hook is taken and Fleet's is a
//!   fallback (used when Ariadne is switched off). Fleet's HOT pages are still moved to the active
//!   list by its framework part.
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
//! **Ablations**: every part is optional (`[policy.unified] fleet.enabled = false`, or
//! `--param unified.fleet.enabled=false`); all part parameters are available as
//! `<part>.<key>`. The ablation table of `hotlaunch compare` runs unified without each part; the
//! figures that justify the choices above are in `crates/policy/README.md` (Unified).

use crate::compose::{Composed, Part, Seams};
use crate::{ariadne, fleet, memsaver, regions, FromDefault};

/// The `unified` policy (see the module doc).
pub fn unified() -> Composed {
    Composed {
        name: "unified",
        description: "Ariadne's hotness-aware zram + Fleet's background-object GC + MemSaver's context-aware page-out + ISMM'15 regions, composed",
        parts: vec![
            Part::all(Box::new(ariadne::Ariadne::default())).optional(),
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
