//! The built-in scenarios (`crates/workload/scenarios/*.toml`, compiled in), by name: the
//! default day and each paper's setups. Add one line here per new scenario file.

const BUILTINS: &[(&str, &str)] = &[
    ("default", include_str!("../scenarios/default.toml")),
    (
        "multitasker-4gb",
        include_str!("../scenarios/multitasker-4gb.toml"),
    ),
    ("day-12gb", include_str!("../scenarios/day-12gb.toml")),
    ("day-2gb", include_str!("../scenarios/day-2gb.toml")),
    (
        "memsaver-fig11-contexts",
        include_str!("../scenarios/memsaver-fig11-contexts.toml"),
    ),
    (
        "memsaver-fig9-youtube",
        include_str!("../scenarios/memsaver-fig9-youtube.toml"),
    ),
    (
        "memsaver-fig1-hot",
        include_str!("../scenarios/memsaver-fig1-hot.toml"),
    ),
    (
        "memsaver-system",
        include_str!("../scenarios/memsaver-system.toml"),
    ),
    (
        "fleet-fig2-twitter",
        include_str!("../scenarios/fleet-fig2-twitter.toml"),
    ),
    (
        "fleet-3.1-instagram-swap",
        include_str!("../scenarios/fleet-3.1-instagram-swap.toml"),
    ),
    (
        "ariadne-fig2-zram",
        include_str!("../scenarios/ariadne-fig2-zram.toml"),
    ),
    (
        "ariadne-6.1-relaunch",
        include_str!("../scenarios/ariadne-6.1-relaunch.toml"),
    ),
    (
        "ariadne-6.1-lzo",
        include_str!("../scenarios/ariadne-6.1-lzo.toml"),
    ),
    (
        "ariadne-table2-light",
        include_str!("../scenarios/ariadne-table2-light.toml"),
    ),
    (
        "ariadne-table2-heavy",
        include_str!("../scenarios/ariadne-table2-heavy.toml"),
    ),
    (
        "ariadne-fig3-kswapd",
        include_str!("../scenarios/ariadne-fig3-kswapd.toml"),
    ),
    (
        "marvin-fig3-alloc",
        include_str!("../scenarios/marvin-fig3-alloc.toml"),
    ),
    ("ismm15-livelab", include_str!("../scenarios/ismm15-livelab.toml")),
    ("ismm15-regions", include_str!("../scenarios/ismm15-regions.toml")),
    (
        "fleet-7.1-capacity",
        include_str!("../scenarios/fleet-7.1-capacity.toml"),
    ),
    (
        "marvin-8.3-capacity",
        include_str!("../scenarios/marvin-8.3-capacity.toml"),
    ),
    (
        "fleet-7.2-hotlaunch",
        include_str!("../scenarios/fleet-7.2-hotlaunch.toml"),
    ),
    (
        "fleet-7.1-commercial",
        include_str!("../scenarios/fleet-7.1-commercial.toml"),
    ),
    (
        "fleet-7.1-synthetic-512",
        include_str!("../scenarios/fleet-7.1-synthetic-512.toml"),
    ),
    (
        "fleet-7.1-synthetic-2048",
        include_str!("../scenarios/fleet-7.1-synthetic-2048.toml"),
    ),
    ("fleet-7.1-gc", include_str!("../scenarios/fleet-7.1-gc.toml")),
    (
        "marvin-8.3-active",
        include_str!("../scenarios/marvin-8.3-active.toml"),
    ),
    ("marvin-8.3-mix", include_str!("../scenarios/marvin-8.3-mix.toml")),
    (
        "marvin-8.2-reclaim",
        include_str!("../scenarios/marvin-8.2-reclaim.toml"),
    ),
];

/// Names of the built-in scenarios.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(n, _)| *n).collect()
}

/// TOML text of a built-in scenario.
pub fn builtin_toml(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
