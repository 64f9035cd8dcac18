//! Test-only policies (not in [`crate::all`], so not reachable from the command line): they
//! exercise the parameter and composition machinery in this crate's and `hotlaunch`'s tests.

use crate::android::Android;
use crate::{ParamSpec, Params, Policy, PolicyParts, SwapOverrides};
use device::DeviceProfile;

/// Stock Android with one parameter of every kind; `build` checks it can read each of them.
pub struct Knobs;

impl Knobs {
    pub const NAME: &'static str = "test-knobs";
}

impl Policy for Knobs {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn description(&self) -> &'static str {
        "test policy: stock Android with one parameter of each kind"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::bool("on", true).about("a switch").source("test value"),
            ParamSpec::int("D", 2, 1, 8)
                .unit("pages")
                .about("an integer")
                .source("Fleet §5.3.1 style, artifact value D=2"),
            ParamSpec::float("ratio", 0.5, 0.0, 1.0)
                .about("a fraction")
                .source("test value"),
            ParamSpec::string("tag", "x")
                .about("a string")
                .source("test value"),
            ParamSpec::one_of("codec", "lz4", &["lz4", "zstd", "lzo"])
                .about("an enum")
                .source("test value"),
        ]
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        // Every accessor must work on resolved parameters.
        let _ = (
            params.bool("on"),
            params.int("D"),
            params.float("ratio"),
            params.str("tag"),
            params.str("codec"),
        );
        Android { flash_swap: false }.build(device, swap, &Params::default())
    }
}

/// Looks up `name` among [`crate::all`] and the test policies.
pub fn by_name(name: &str) -> Result<crate::PolicyBox, String> {
    if name == Knobs::NAME {
        return Ok(Box::new(Knobs));
    }
    crate::by_name(name)
}
