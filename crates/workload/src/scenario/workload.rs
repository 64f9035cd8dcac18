//! The `[workload]` table and script events of a scenario, and the user timeline they build
//! (split from the scenario parser by concern: this part knows the workload kinds).

use super::*;

pub(super) fn parse_workload(c: &Ctx, w: RawWorkload, n_apps: usize) -> Result<WorkloadSpec, ScenarioError> {
    let s = "workload";
    let present: Vec<&str> = [
        ("launches", w.launches.is_some()),
        ("order", w.order.is_some()),
        ("rounds", w.rounds.is_some()),
        ("targets", w.targets.is_some()),
        ("others", w.others.is_some()),
        ("n_between", w.n_between.is_some()),
        ("repeats", w.repeats.is_some()),
        ("use_s", w.use_s.is_some()),
        ("home_wait_s", w.home_wait_s.is_some()),
        ("repeat", w.repeat.is_some()),
        ("events", w.events.is_some()),
        ("zipf_exponent", w.zipf_exponent.is_some()),
        ("weights", w.weights.is_some()),
        ("locality_p", w.locality_p.is_some()),
        ("locality_k", w.locality_k.is_some()),
        ("dwell_median_s", w.dwell_median_s.is_some()),
        ("dwell_sigma", w.dwell_sigma.is_some()),
        ("dwell_max_s", w.dwell_max_s.is_some()),
        ("session_apps_mean", w.session_apps_mean.is_some()),
        ("direct_switch_p", w.direct_switch_p.is_some()),
        ("home_pause_s", w.home_pause_s.is_some()),
        ("gap_mean_s", w.gap_mean_s.is_some()),
        ("same_context_p", w.same_context_p.is_some()),
    ]
    .into_iter()
    .filter(|(_, p)| *p)
    .map(|(k, _)| k)
    .collect();
    let allowed: Vec<&str> = match w.kind.as_str() {
        "livelab" => LIVELAB_KEYS.to_vec(),
        "launch-one-more" => vec!["order", "rounds", "use_s", "home_wait_s"],
        "relaunch-after" => vec![
            "targets",
            "others",
            "n_between",
            "repeats",
            "use_s",
            "home_wait_s",
        ],
        "round-robin" => vec!["order", "rounds", "use_s", "home_wait_s"],
        "script" => vec!["events", "repeat"],
        other => return Err(c.invalid(s, "kind", &format!("one of {KINDS}"), &format!("{other:?}"))),
    };
    if let Some(k) = present.iter().find(|k| !allowed.contains(k)) {
        return Err(c.invalid(
            s,
            k,
            &format!(
                "no `{k}` for kind = {:?} (its keys: {})",
                w.kind,
                allowed.join(", ")
            ),
            "a value",
        ));
    }
    let params = || -> Result<ProtocolParams, ScenarioError> {
        Ok(ProtocolParams {
            use_s: c.num(s, "use_s", w.use_s.unwrap_or(30.0), 0.0, true, 1e7)?,
            home_wait_s: w
                .home_wait_s
                .map(|x| c.num(s, "home_wait_s", x, 0.0, true, 1e7))
                .transpose()?,
        })
    };
    let names = |key: &str, v: &Option<Vec<String>>| -> Result<Vec<String>, ScenarioError> {
        let v = v.clone().unwrap_or_default();
        if let Some(n) = v.iter().find(|n| n.trim().is_empty()) {
            return Err(c.invalid(s, key, "non-empty app names", &format!("{n:?}")));
        }
        Ok(v)
    };
    Ok(match w.kind.as_str() {
        "livelab" => {
            let d = LiveLabParams::default();
            let launches = match w.launches {
                Some(l) => c.count(s, "launches", l, 1, MAX_LAUNCHES)?,
                None => {
                    return Err(c.invalid(
                        s,
                        "launches",
                        "the number of launches for kind = \"livelab\"",
                        "nothing",
                    ))
                }
            };
            if let Some(wt) = &w.weights {
                if wt.len() != n_apps {
                    return Err(c.invalid(
                        s,
                        "weights",
                        &format!("one weight per app ({n_apps})"),
                        &format!("{} weights", wt.len()),
                    ));
                }
                for &x in wt {
                    c.num(s, "weights", x, 0.0, true, 1e12)?;
                }
                if wt.iter().all(|&x| x == 0.0) {
                    return Err(c.invalid(s, "weights", "at least one positive weight", "all zero"));
                }
            }
            let params = LiveLabParams {
                zipf_exponent: c.num(
                    s,
                    "zipf_exponent",
                    w.zipf_exponent.unwrap_or(d.zipf_exponent),
                    0.0,
                    true,
                    10.0,
                )?,
                weights: w.weights.clone(),
                locality_p: c.num(
                    s,
                    "locality_p",
                    w.locality_p.unwrap_or(d.locality_p),
                    0.0,
                    true,
                    1.0,
                )?,
                locality_k: c.count(
                    s,
                    "locality_k",
                    w.locality_k.unwrap_or(d.locality_k as u64),
                    1,
                    1000,
                )?,
                dwell_median_s: c.num(
                    s,
                    "dwell_median_s",
                    w.dwell_median_s.unwrap_or(d.dwell_median_s),
                    0.0,
                    false,
                    1e6,
                )?,
                dwell_sigma: c.num(
                    s,
                    "dwell_sigma",
                    w.dwell_sigma.unwrap_or(d.dwell_sigma),
                    0.0,
                    true,
                    5.0,
                )?,
                dwell_max_s: c.num(
                    s,
                    "dwell_max_s",
                    w.dwell_max_s.unwrap_or(d.dwell_max_s),
                    1.0,
                    true,
                    1e6,
                )?,
                session_apps_mean: c.num(
                    s,
                    "session_apps_mean",
                    w.session_apps_mean.unwrap_or(d.session_apps_mean),
                    1.0,
                    true,
                    1000.0,
                )?,
                direct_switch_p: c.num(
                    s,
                    "direct_switch_p",
                    w.direct_switch_p.unwrap_or(d.direct_switch_p),
                    0.0,
                    true,
                    1.0,
                )?,
                home_pause_s: c.num(
                    s,
                    "home_pause_s",
                    w.home_pause_s.unwrap_or(d.home_pause_s),
                    0.0,
                    true,
                    1e6,
                )?,
                gap_mean_s: c.num(
                    s,
                    "gap_mean_s",
                    w.gap_mean_s.unwrap_or(d.gap_mean_s),
                    0.0,
                    true,
                    1e7,
                )?,
                same_context_p: c.num(
                    s,
                    "same_context_p",
                    w.same_context_p.unwrap_or(d.same_context_p),
                    0.0,
                    true,
                    1.0,
                )?,
            };
            WorkloadSpec::LiveLab { launches, params }
        }
        "launch-one-more" => WorkloadSpec::LaunchOneMore {
            order: names("order", &w.order)?,
            rounds: c.count(s, "rounds", w.rounds.unwrap_or(1), 1, 10_000)?,
            params: params()?,
        },
        "round-robin" => WorkloadSpec::RoundRobin {
            order: names("order", &w.order)?,
            rounds: c.count(s, "rounds", w.rounds.unwrap_or(2), 1, 10_000)?,
            params: params()?,
        },
        "relaunch-after" => {
            let targets = names("targets", &w.targets)?;
            if targets.is_empty() {
                return Err(c.invalid(
                    s,
                    "targets",
                    "at least one target app for kind = \"relaunch-after\"",
                    "none",
                ));
            }
            WorkloadSpec::RelaunchAfter {
                targets,
                others: names("others", &w.others)?,
                n_between: c.count(s, "n_between", w.n_between.unwrap_or(10), 0, 10_000)?,
                repeats: c.count(s, "repeats", w.repeats.unwrap_or(20), 1, 100_000)?,
                params: params()?,
            }
        }
        _ => {
            let raw = w.events.clone().unwrap_or_default();
            if raw.is_empty() {
                return Err(c.invalid(
                    s,
                    "events",
                    "at least one [[workload.events]] for kind = \"script\"",
                    "none",
                ));
            }
            let repeat = c.count(s, "repeat", w.repeat.unwrap_or(1), 1, 100_000)?;
            let mut events = Vec::with_capacity(raw.len());
            for (i, e) in raw.into_iter().enumerate() {
                events.push(parse_event(c, i, e)?);
            }
            if repeat > 1 && events.iter().any(|e| e.at_s.is_some()) {
                return Err(c.invalid(
                    s,
                    "repeat",
                    "1 when events have explicit at_s times",
                    &repeat.to_string(),
                ));
            }
            if (events.len() as u64).saturating_mul(repeat as u64) > MAX_LAUNCHES {
                return Err(c.invalid(
                    s,
                    "repeat",
                    &format!("events × repeat ≤ {MAX_LAUNCHES}"),
                    &repeat.to_string(),
                ));
            }
            WorkloadSpec::Script { events, repeat }
        }
    })
}

fn parse_event(c: &Ctx, i: usize, e: RawEvent) -> Result<ScriptEvent, ScenarioError> {
    let sec = format!("workload.events[{i}]");
    let line = tomlerr::find_key_line(c.text, &sec, "launch")
        .or_else(|| tomlerr::find_key_line(c.text, &sec, "home"))
        .or_else(|| tomlerr::find_key_line(c.text, &sec, "alloc_mb"))
        .or_else(|| tomlerr::find_key_line(c.text, &sec, "kill"))
        .or_else(|| tomlerr::find_key_line(c.text, &sec, "wait_s"));
    let actions: Vec<&str> = [
        ("launch", e.launch.is_some()),
        ("home", e.home.is_some()),
        ("alloc_mb", e.alloc_mb.is_some()),
        ("kill", e.kill.is_some()),
    ]
    .into_iter()
    .filter(|(_, p)| *p)
    .map(|(k, _)| k)
    .collect();
    if actions.len() > 1 {
        return Err(c.invalid(
            &sec,
            actions[1],
            "exactly one of launch, home, alloc_mb, kill, wait_s per event",
            &actions.join(" and "),
        ));
    }
    let at_s = e
        .at_s
        .map(|x| c.num(&sec, "at_s", x, 0.0, true, 1e9))
        .transpose()?;
    let wait = |allowed: bool| -> Result<f64, ScenarioError> {
        match e.wait_s {
            Some(_) if !allowed => {
                Err(c.invalid(&sec, "wait_s", "use_s (not wait_s) after a launch", "wait_s"))
            }
            Some(x) => c.num(&sec, "wait_s", x, 0.0, true, 1e9),
            None => Ok(0.0),
        }
    };
    let forbid = |key: &str, present: bool, what: &str| -> Result<(), ScenarioError> {
        if present {
            Err(c.invalid(&sec, key, &format!("no `{key}` on {what} events"), "a value"))
        } else {
            Ok(())
        }
    };
    let kind = match actions.first().copied() {
        Some("launch") => {
            forbid("app", e.app.is_some(), "launch")?;
            wait(false)?;
            let app = e.launch.clone().unwrap_or_default();
            if app.trim().is_empty() {
                return Err(c.invalid(&sec, "launch", "an app name", "\"\""));
            }
            let use_s = c.num(&sec, "use_s", e.use_s.unwrap_or(0.0), 0.0, true, 1e9)?;
            ScriptAction::Launch {
                app,
                context: e.context.clone(),
                use_s,
            }
        }
        Some(other) => {
            forbid("context", e.context.is_some(), other)?;
            forbid("use_s", e.use_s.is_some(), other)?;
            match other {
                "home" => {
                    forbid("app", e.app.is_some(), "home")?;
                    if e.home != Some(true) {
                        return Err(c.invalid(&sec, "home", "true", "false"));
                    }
                    ScriptAction::Home { wait_s: wait(true)? }
                }
                "alloc_mb" => ScriptAction::Alloc {
                    app: e.app.clone(),
                    mb: c.num(&sec, "alloc_mb", e.alloc_mb.unwrap_or(0.0), 0.0, false, 1e6)?,
                    wait_s: wait(true)?,
                },
                _ => {
                    forbid("app", e.app.is_some(), "kill")?;
                    ScriptAction::Kill {
                        app: e.kill.clone().unwrap_or_default(),
                        wait_s: wait(true)?,
                    }
                }
            }
        }
        None => {
            forbid("context", e.context.is_some(), "wait")?;
            forbid("use_s", e.use_s.is_some(), "wait")?;
            forbid("app", e.app.is_some(), "wait")?;
            match e.wait_s {
                Some(x) => ScriptAction::Wait {
                    wait_s: c.num(&sec, "wait_s", x, 0.0, true, 1e9)?,
                },
                None if at_s.is_some() => ScriptAction::Wait { wait_s: 0.0 },
                None => {
                    return Err(c.invalid(
                        &sec,
                        "launch",
                        "one of launch, home, alloc_mb, kill, wait_s",
                        "an empty event",
                    ))
                }
            }
        }
    };
    Ok(ScriptEvent { at_s, kind, line })
}

fn app_list(c: &Ctx, key: &str, names: &[String], apps: &[AppProfile]) -> Result<Vec<usize>, ScenarioError> {
    names
        .iter()
        .map(|n| {
            find_app(apps, n).ok_or_else(|| {
                c.invalid(
                    "workload",
                    key,
                    &format!("apps of [apps] names ({})", app_names(apps)),
                    &format!("{n:?}"),
                )
            })
        })
        .collect()
}

fn app_names(apps: &[AppProfile]) -> String {
    apps.iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn build_timeline(
    c: &Ctx,
    w: &WorkloadSpec,
    apps: &[AppProfile],
    seed: u64,
    dram_mb: u64,
) -> Result<Timeline, ScenarioError> {
    let all: Vec<usize> = (0..apps.len()).collect();
    Ok(match w {
        WorkloadSpec::LiveLab { launches, params } => user::livelab(apps, *launches, seed, params),
        WorkloadSpec::LaunchOneMore {
            order,
            rounds,
            params,
        } => {
            let order = if order.is_empty() {
                all
            } else {
                app_list(c, "order", order, apps)?
            };
            let rep: Vec<usize> = (0..*rounds).flat_map(|_| order.iter().copied()).collect();
            user::launch_one_more(&rep, params)
        }
        WorkloadSpec::RoundRobin {
            order,
            rounds,
            params,
        } => {
            let order = if order.is_empty() {
                all
            } else {
                app_list(c, "order", order, apps)?
            };
            user::round_robin(&order, *rounds, params)
        }
        WorkloadSpec::RelaunchAfter {
            targets,
            others,
            n_between,
            repeats,
            params,
        } => {
            let t = app_list(c, "targets", targets, apps)?;
            let explicit = app_list(c, "others", others, apps)?;
            let mut b = TimelineBuilder::new();
            for &target in &t {
                let o: Vec<usize> = if explicit.is_empty() {
                    all.iter().copied().filter(|&a| a != target).collect()
                } else {
                    explicit.iter().copied().filter(|&a| a != target).collect()
                };
                user::relaunch_after_into(&mut b, target, &o, *n_between, *repeats, params);
            }
            b.home();
            b.finish(5.0)
        }
        WorkloadSpec::Script { events, repeat } => {
            let mut b = TimelineBuilder::new();
            let mut fg: Option<usize> = None;
            for _ in 0..*repeat {
                for (i, e) in events.iter().enumerate() {
                    let sec = format!("workload.events[{i}]");
                    let ev_err = |key: &str, expected: String, got: String| ScenarioError::Invalid {
                        origin: tomlerr::one_line(c.origin),
                        line: tomlerr::find_key_line(c.text, &sec, key).or(e.line),
                        key: format!("{sec}.{key}"),
                        expected: tomlerr::one_line(&expected),
                        got: tomlerr::one_line(&got),
                    };
                    let find = |key: &str, n: &str| {
                        find_app(apps, n).ok_or_else(|| {
                            ev_err(
                                key,
                                format!("an app of [apps] names ({})", app_names(apps)),
                                format!("{n:?}"),
                            )
                        })
                    };
                    if let Some(at) = e.at_s {
                        let at_ns = user::secs(at);
                        if at_ns < b.now() {
                            return Err(ev_err(
                                "at_s",
                                format!("a time ≥ {} s (events are in time order)", b.now() as f64 / 1e9),
                                at.to_string(),
                            ));
                        }
                        b.at(at_ns);
                    }
                    match &e.kind {
                        ScriptAction::Launch { app, context, use_s } => {
                            let a = find("launch", app)?;
                            let ctx = match context {
                                None => 0,
                                Some(cn) => apps[a].context_index(cn).ok_or_else(|| {
                                    ev_err(
                                        "context",
                                        format!(
                                            "a context of {} ({})",
                                            apps[a].name,
                                            apps[a].contexts.join(", ")
                                        ),
                                        format!("{cn:?}"),
                                    )
                                })?,
                            };
                            b.launch(a, ctx, *use_s);
                            fg = Some(a);
                        }
                        ScriptAction::Home { wait_s } => {
                            b.home().wait(*wait_s);
                            fg = None;
                        }
                        ScriptAction::Alloc { app, mb, wait_s } => {
                            let a = match app {
                                Some(n) => find("app", n)?,
                                None => fg.ok_or_else(|| {
                                    ev_err(
                                        "alloc_mb",
                                        "an `app` key or a foreground app (launch one first)".into(),
                                        "no app".into(),
                                    )
                                })?,
                            };
                            // More than the phone's DRAM at once cannot be resident; the host
                            // would hold every simulated page of it.
                            if *mb > dram_mb as f64 {
                                return Err(ev_err(
                                    "alloc_mb",
                                    format!("at most the device's DRAM ({dram_mb} MiB)"),
                                    mb.to_string(),
                                ));
                            }
                            b.alloc(a, *mb).wait(*wait_s);
                        }
                        ScriptAction::Kill { app, wait_s } => {
                            let a = find("kill", app)?;
                            if fg == Some(a) {
                                fg = None;
                            }
                            b.kill(a).wait(*wait_s);
                        }
                        ScriptAction::Wait { wait_s } => {
                            b.wait(*wait_s);
                        }
                    }
                }
            }
            b.finish(1.0)
        }
    })
}
