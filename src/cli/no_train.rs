//! Stand-ins for the commands of the `train` feature in a build without it:
//! they take any arguments and say how to get the feature, instead of clap's
//! "unrecognized subcommand" (which suggests an unrelated command).

use anyhow::{bail, Result};
use clap::Args;

/// README section that explains `scripts/libtorch.sh` and the feature.
pub const README_SECTION: &str = "Training on the simulated network (feature `train`)";

/// Any arguments at all (they are not parsed).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct AnyArgs {
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true, hide = true)]
    args: Vec<std::ffi::OsString>,
}

/// Fails with the message naming the feature and the README section.
pub fn run(command: &str, _args: AnyArgs) -> Result<()> {
    bail!(
        "`fedtopo {command}`: built without the `train` feature: see README (section \
         \"{README_SECTION}\"; build with `scripts/libtorch.sh cargo build --release --features train`)"
    )
}
