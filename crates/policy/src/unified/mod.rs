//! `unified`: the compatible mechanisms of the five techniques on one stack, assembled with
//! [`Composed`] from the technique modules themselves (no mechanism code is copied here: this
//! module only says which part supplies which seam).
//!
//! | part | seams taken | what it contributes |
//! |---|---|---|
//! | [`ariadne`] (HPCA'25), **off by default** (`ariadne.enabled = true`) | swap devices, reclaim, fault, framework | hot/warm/cold lists (HotnessOrg), chunk size by hotness (AdaptiveComp), pre-decompression (PreDecomp) |
//! | [`fleet`] (ASPLOS'24), **off by default** (`fleet.enabled = true`) | runtime, framework; reclaim and swap devices as fallbacks (taken while Ariadne is off) | grouping GC and background-object GC (no GC faults a background heap back in), COLD_RUNTIME page-out of cold regions, HOT_RUNTIME launch regions kept until last-resort reclaim |
//! | [`memsaver`] (ICPE'24) | framework; swap devices as a fallback | per-context hot-launch set H + transition working set B1 kept, the rest of a background app (native, file and Java pages) paged out at the end of its transition |
//! | [`regions`] (ISMM'15), `region_effort = false` | placement, framework; swap devices as a fallback | region domains and special domains for physical memory (I/O buffers from whole regions) |
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
//! **Defaults, chosen by measurement** (`hotlaunch compare default --seeds 3 --ablation`, plus
//! the variants below with `--param`; Pixel 3 default day, 300 launches, seeds 1–3; means with
//! the 95% intervals of the compare JSON in brackets; `regions.region_effort = false` in every
//! row with regions except the `regions` row itself; measured at commit 07c3e8b, before app file
//! writes were modelled, which moved the stock default day's p90 from 416 to 469 ms on seed 1:
//! to be re-measured):
//!
//! | configuration | hot p90 ms | hot p50 ms | cached mean | mm CPU s | kills |
//! |---|---|---|---|---|---|
//! | android | 520 [289, 751] | 136 | 12.52 | 111.1 | 18.3 |
//! | fleet | 591 [391, 791] | 150 | 12.73 | 119.7 | 18.7 |
//! | memsaver | 406 [182, 630] | 193 | 13.36 | 118.9 | 15.0 |
//! | ariadne | 408 [380, 436] | 218 | 13.65 | 131.0 | 13.7 |
//! | regions (`region_effort = true`) | 312 [202, 422] | 130 | 10.14 | 361.0 | 37.3 |
//! | all four parts | 408 [397, 419] | 222 | 13.63 | 194.6 | 12.0 |
//! | fleet + memsaver + regions | 500 [231, 769] | 209 | 13.64 | 162.8 | 12.3 |
//! | ariadne + memsaver + regions | 416 [386, 446] | 224 | 13.60 | 150.1 | 12.0 |
//! | ariadne + memsaver | 401 [367, 435] | 221 | 13.40 | 138.5 | 14.3 |
//! | fleet + memsaver | 434 [27, 840] | 204 | 13.30 | 150.8 | 15.0 |
//! | fleet + regions | 602 [188, 1016] | 159 | 12.59 | 129.5 | 18.7 |
//! | **memsaver + regions (default)** | 425 [285, 565] | 196 | 13.78 | 125.8 | 13.0 |
//!
//! - *Fleet is off by default*: on this workload it lengthens the tail (fleet alone 591 vs
//!   android 520 ms; adding it to memsaver + regions: 425 → 500 ms) and adds ~37 s of CPU. Its
//!   grouping GC and background-object GCs run 6.6× as many collections as stock (22,730 vs
//!   3,457 on seed 1) and double the GC fault stall (19.8 vs 10.5 s): with MemSaver paging the
//!   background app out at its transition end, Fleet's collections fault pages back in.
//! - *Ariadne is off by default*: on top of MemSaver it changes no figure significantly (p90
//!   401–416 vs 406–425 ms, cached 13.4–13.6 vs 13.4–13.8) and costs 12–20% more CPU; both
//!   act on the same pages (MemSaver pages the cold part out at the transition end, HotnessOrg
//!   orders what is left cold-first).
//! - *Regions take `region_effort = false`*: on a zram phone memory stays near full, so with the
//!   effort almost every region request runs direct compaction and a reclaim round (seed 1:
//!   1.3 M region requests, 102,539 compaction stalls, 372 s of compaction CPU, 29 kills, cold
//!   p90 9.1 s). Without it a request that finds no free order-`order` block takes a single
//!   page, as the paper's stray pages do; the region allocator still hands I/O buffers whole
//!   regions when apps die.
//! - **The issue-21 target is not met on this workload**: no composition beats MemSaver or
//!   Ariadne alone on p90 hot launch by a significant margin; every p90 difference among
//!   memsaver, ariadne and the compositions containing MemSaver is inside the intervals.
//!   `regions` alone has the lowest p90 only because it keeps 3.5 fewer apps cached (37 kills):
//!   fewer deeply swapped apps relaunch hot. The techniques overlap instead of adding up:
//!   MemSaver, Ariadne and Fleet's COLD hint all decide the same thing (which background pages
//!   leave DRAM first), and Fleet's GC-side gain needs the background heap to stay untouched,
//!   which MemSaver's page-out undoes.
//!
//! **Ablations**: every part is optional (`[policy.unified] fleet.enabled = false`, or
//! `--param unified.fleet.enabled=false`); all part parameters are available as
//! `<part>.<key>`. `hotlaunch compare SCENARIO --ablation` adds a row per switch (each part on by
//! default turned off, each part off by default turned on) and shows them in the dashboard's
//! ablation table with paired differences from `unified` over the seeds.

use crate::compose::{Composed, Part, Seams};
use crate::{ariadne, fleet, memsaver, regions, FromDefault, ParamValue};

/// The `unified` policy (see the module doc).
pub fn unified() -> Composed {
    Composed {
        name: "unified",
        description: "MemSaver's context-aware page-out + ISMM'15 regions (+ Fleet's background-object GC and Ariadne's hotness-aware zram, off by default), composed",
        parts: vec![
            Part::all(Box::new(ariadne::Ariadne::default())).off_by_default(),
            Part::taking(
                Box::new(FromDefault::<fleet::Fleet>::new()),
                Seams::RUNTIME | Seams::FRAMEWORK,
            )
            .or_else(Seams::RECLAIM | Seams::SWAP_BACKENDS)
            .off_by_default(),
            Part::taking(Box::new(memsaver::MemSaver::default()), Seams::FRAMEWORK)
                .or_else(Seams::SWAP_BACKENDS)
                .optional(),
            Part::taking(Box::new(regions::Regions), Seams::PLACEMENT | Seams::FRAMEWORK)
                .or_else(Seams::SWAP_BACKENDS)
                .default_param(
                    "region_effort",
                    ParamValue::Bool(false),
                    "unified module doc: with the effort a zram phone compacts on almost every region request",
                )
                .optional(),
        ],
    }
}
