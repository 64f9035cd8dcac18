//! Launch bias (`runtime::launch_bias`): a launch's Java pages become pages of near-root objects
//! or the objects linked just before the app left the foreground, in the configured proportions.

use engine::{Actor, CpuLedger, RngStreams};
use runtime::gen::GraphSpec;
use runtime::launch_bias::{depths, near_root_pages};
use runtime::{HeapConfig, JavaApp, JavaModel, JavaParams, LaunchBias, LinkedParams, NullBacking, StockArt};
use std::sync::Arc;

fn app(bias: LaunchBias) -> (JavaApp, u32) {
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
    let j = JavaApp::new(
        1,
        &model,
        Box::new(StockArt),
        pages,
        RngStreams::new(4).stream("j", 0),
        0,
    );
    (j, pages)
}

#[test]
fn near_root_pages_hold_shallow_objects() {
    let (j, pages) = app(LaunchBias::default());
    let d = depths(&j.bp);
    let nro = near_root_pages(&j.bp, j.bp.total_bytes() as f64 / pages as f64, pages, 2);
    let shallow = d.iter().filter(|&&x| x <= 2).count();
    assert!(shallow > 0 && shallow < d.len() / 2, "{shallow} of {}", d.len());
    assert!(!nro.is_empty() && (nro.len() as u32) < pages);
    // Every root is depth 0 and on a near-root page.
    for &r in &j.bp.roots {
        assert_eq!(d[r as usize], 0);
        let p = (j.bp.start[r as usize] as f64 / (j.bp.total_bytes() as f64 / pages as f64)) as u32;
        assert!(nro.binary_search(&p).is_ok());
    }
}

#[test]
fn launch_pages_are_biased_in_the_configured_proportions() {
    let bias = LaunchBias {
        near_root_share: 0.5,
        near_root_depth: 2,
        young_share: 0.2,
    };
    let (mut j, pages) = app(bias);
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    j.build_to(0, pages, &mut b, &mut l).unwrap();
    j.set_foreground(1, true, &mut l);
    j.alloc_garbage(2, 2e6, &mut b, &mut l).unwrap();
    j.set_foreground(3, false, &mut l);
    let nro = near_root_pages(&j.bp, j.bp.total_bytes() as f64 / pages as f64, pages, 2);
    // Launch set: 2000 Java pages that are not near-root, plus 100 non-Java offsets.
    let far: Vec<u32> = (0..pages).filter(|p| nro.binary_search(p).is_err()).collect();
    let set: Vec<u32> = (0..2000)
        .map(|i| far[i % far.len()])
        .chain(pages..pages + 100)
        .collect();
    let (out, young) = j.bias_launch(&set, pages);
    let near = out.iter().filter(|p| nro.binary_search(p).is_ok()).count() as f64 / 2000.0;
    assert!((0.45..0.55).contains(&near), "near-root share {near}");
    assert!((0.16..0.24).contains(&(young as f64 / 2000.0)), "young {young}");
    assert_eq!(
        out.len() as u32 + young,
        2100,
        "every page kept, replaced or made young"
    );
    assert!(out.ends_with(&(pages..pages + 100).collect::<Vec<_>>()));
    // Young pages touch objects linked before the switch.
    let mut touched = Vec::new();
    j.touch_young(4, Actor::AppMain(1), young, &mut b, Some(&mut touched));
    assert!(!touched.is_empty());
    let young_objs: Vec<u32> = j.linked.young_at_switch(&j.rt.heap).collect();
    assert_eq!(young_objs.len(), runtime::linked::RECENT);
    // Without the bias the set is unchanged.
    j.params.launch_bias = None;
    assert_eq!(j.bias_launch(&set, pages), (set.clone(), 0));
}
