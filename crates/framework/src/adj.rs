//! `oom_score_adj` values of Android's ProcessList.java (frameworks/base).

pub const NATIVE_ADJ: i16 = -1000;
pub const SYSTEM_ADJ: i16 = -900;
pub const PERSISTENT_PROC_ADJ: i16 = -800;
pub const PERSISTENT_SERVICE_ADJ: i16 = -700;
pub const FOREGROUND_APP_ADJ: i16 = 0;
pub const PERCEPTIBLE_RECENT_FOREGROUND_APP_ADJ: i16 = 50;
pub const VISIBLE_APP_ADJ: i16 = 100;
pub const PERCEPTIBLE_APP_ADJ: i16 = 200;
pub const PERCEPTIBLE_LOW_APP_ADJ: i16 = 250;
pub const BACKUP_APP_ADJ: i16 = 300;
pub const HEAVY_WEIGHT_APP_ADJ: i16 = 400;
pub const SERVICE_ADJ: i16 = 500;
pub const HOME_APP_ADJ: i16 = 600;
pub const PREVIOUS_APP_ADJ: i16 = 700;
pub const SERVICE_B_ADJ: i16 = 800;
pub const CACHED_APP_MIN_ADJ: i16 = 900;
pub const CACHED_APP_LMK_FIRST_ADJ: i16 = 950;
pub const CACHED_APP_MAX_ADJ: i16 = 999;

/// Adj of the `rank`-th most recently used cached app (0 = most recent). OomAdjuster spreads
/// cached apps over 900..999 in LRU order in steps (CACHED_APP_IMPORTANCE_LEVELS = 5 → step 10
/// per slot in Android 10+); we give each older app the next step, capped at 999.
pub fn cached_adj(rank: usize) -> i16 {
    (CACHED_APP_MIN_ADJ as usize + 10 * rank).min(CACHED_APP_MAX_ADJ as usize) as i16
}
