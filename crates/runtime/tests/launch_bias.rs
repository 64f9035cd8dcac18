//! Launch bias (`runtime::launch_bias`): a launch's Java pages become page-sized runs of near-root
//! objects or of the objects linked just before the app left the foreground, in the configured
//! proportions.

use engine::{Actor, CpuLedger, RngStreams};
use runtime::gen::GraphSpec;
use runtime::heap::Meta;
use runtime::launch_bias::depths;
use runtime::{
    Access, BarrierOutcome, HeapConfig, JavaApp, JavaModel, JavaParams, LaunchBias, LinkedParams,
    NullBacking, ObjId, RuntimeHooks,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Stock ART recording every object accessed.
struct Record(Arc<Mutex<Vec<ObjId>>>);

impl RuntimeHooks for Record {
    fn barrier(&mut self, a: &Access, _meta: &mut Meta) -> BarrierOutcome {
        self.0.lock().unwrap().push(a.obj.id);
        BarrierOutcome::TOUCH
    }
}

fn app(bias: LaunchBias) -> (JavaApp, u32, Arc<Mutex<Vec<ObjId>>>) {
    let bp = GraphSpec {
        bytes: 4 << 20,
        ..GraphSpec::default()
    }
    .blueprint(&mut RngStreams::new(2).stream("bp", 0));
    let pages = (bp.total_bytes() / 4096) as u32;
    let model = JavaModel {
        blueprint: Arc::new(bp).into(),
        config: HeapConfig {
            capacity: 128 << 20,
            growth_limit: 64 << 20,
            ..HeapConfig::default()
        },
        params: JavaParams {
            linked: Some(LinkedParams {
                share: 0.5,
                ..LinkedParams::default()
            }),
            launch_bias: Some(bias),
            ..JavaParams::default()
        },
    };
    let rec = Arc::new(Mutex::new(Vec::new()));
    let hooks = Box::new(Record(Arc::clone(&rec)));
    let j = JavaApp::new(1, &model, hooks, pages, RngStreams::new(4).stream("j", 0), 0);
    (j, pages, rec)
}

#[test]
fn launch_pages_are_biased_in_the_configured_proportions() {
    let bias = LaunchBias {
        near_root_share: 0.5,
        near_root_depth: 2,
        young_share: 0.2,
    };
    let (mut j, pages, rec) = app(bias);
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    j.build_to(0, pages, &mut b, &mut l).unwrap();
    j.set_foreground(1, true, &mut l);
    j.alloc_garbage(2, 2e6, &mut b, &mut l).unwrap();
    let gc = Some(runtime::GcKind::Full { compact: true });
    j.rt.collect(2, runtime::GcCause::Explicit, gc, &mut b, &mut l);
    let before = j.linked.allocated;
    j.alloc_garbage(3, 1e6, &mut b, &mut l).unwrap();
    let since_gc = (j.linked.allocated - before) as usize;
    j.set_foreground(3, false, &mut l);
    // 2000 Java pages plus 100 non-Java offsets.
    let set: Vec<u32> = (0..2000).map(|i| i % pages).chain(pages..pages + 100).collect();
    let (out, (near, young)) = j.bias_launch(&set, pages);
    assert!((0.45..0.55).contains(&(near as f64 / 2000.0)), "near {near}");
    assert!((0.16..0.24).contains(&(young as f64 / 2000.0)), "young {young}");
    assert_eq!(
        out.len() as u32 + near + young,
        2100,
        "every page kept or replaced"
    );
    assert!(out.ends_with(&(pages..pages + 100).collect::<Vec<_>>()));
    // Near-root pages touch only objects at depth <= 2.
    let d = depths(&j.bp);
    let index: HashMap<ObjId, usize> = (0..j.bp.len()).map(|i| (j.id_of(i as u32), i)).collect();
    rec.lock().unwrap().clear();
    let mut touched = Vec::new();
    j.touch_biased(4, Actor::AppMain(1), (10, 0), &mut b, Some(&mut touched));
    let seen = std::mem::take(&mut *rec.lock().unwrap());
    assert!(seen.len() >= 10 && !touched.is_empty());
    assert!(seen.iter().all(|o| d[index[o]] <= 2), "a deep object was touched");
    // Young pages touch only the objects linked before the switch (none is a blueprint object).
    let young_objs: Vec<ObjId> = j.linked.young_at_switch(&j.rt.heap).collect();
    // Foreground-young: linked since the last GC before the switch (at most RECENT).
    assert_eq!(young_objs.len(), since_gc.min(runtime::linked::RECENT));
    assert!(
        young_objs.len() < j.linked.live(),
        "objects linked before the last GC are not young"
    );
    j.touch_biased(5, Actor::AppMain(1), (0, 5), &mut b, None);
    let seen = std::mem::take(&mut *rec.lock().unwrap());
    assert!(seen.len() >= 5 * 4096 / 112);
    assert!(seen.iter().all(|o| young_objs.contains(o)));
    // Without the bias the set is unchanged.
    j.params.launch_bias = None;
    assert_eq!(j.bias_launch(&set, pages), (set.clone(), (0, 0)));
}
